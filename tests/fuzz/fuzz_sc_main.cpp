// Entry point of the libFuzzer targets that link SystemC (the platform parsers): libsystemc
// owns main() and calls sc_main(), so sc_main() hands the command line to libFuzzer's driver
// (libclang_rt.fuzzer_no_main) instead of libFuzzer providing main() itself.
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerRunDriver(int* argc, char*** argv,
                                   int (*callback)(const uint8_t* data, size_t size));

extern "C" int sc_main(int argc, char** argv) {
  return LLVMFuzzerRunDriver(&argc, &argv, &LLVMFuzzerTestOneInput);
}
