#pragma once
// Test helpers for payload-integrity checks through the link: a memory target that keeps what
// is written to it, and the FNV-1a checksum the tests compare end to end.
#include <cstdint>
#include <cstring>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

namespace kvtier::testing {

inline uint64_t fnv1a(const uint8_t* p, size_t n) {  // FNV-1a, 64 bit
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

class StoringMemory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<StoringMemory> in{"in"};
  StoringMemory(sc_core::sc_module_name name, size_t bytes)
      : sc_core::sc_module(name), data_(bytes, 0) {
    in.register_b_transport(this, &StoringMemory::transport);
  }

 private:
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
    if (t.get_address() + t.get_data_length() > data_.size()) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    uint8_t* mem = data_.data() + t.get_address();
    if (t.is_write()) std::memcpy(mem, t.get_data_ptr(), t.get_data_length());
    else std::memcpy(t.get_data_ptr(), mem, t.get_data_length());
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  std::vector<uint8_t> data_;
};

}  // namespace kvtier::testing
