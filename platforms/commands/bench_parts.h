#pragma once
// The parts of `kvtier bench` (platforms/commands/cmd_bench.cpp): the process's memory, SystemC's
// own b_transport ceiling measured beside the run, and a run in a forked child (SystemC
// elaborates once per process) whose figures come back through a pipe.
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "platforms/cli_common.h"
#include "platforms/commands/child_process.h"
#include "platforms/simulate.h"

namespace kvtier::bench {
// The process's resident set now (/proc/self/statm), in MiB; 0 where it cannot be read.
inline double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0.0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}
// The process's peak resident set so far (getrusage: KiB on Linux), in MiB.
inline double peak_resident_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// SystemC's own b_transport ceiling: a bare initiator and target, one reused payload, the
// target annotating a fixed delay, the initiator keeping loosely-timed time with a quantum
// keeper (the global quantum the run used). Elaborated with the platform, started only after
// the run has finished (its thread waits for `start`), so both are measured in this process.
struct CeilingTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<CeilingTarget> socket{"socket"};
  explicit CeilingTarget(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    socket.register_b_transport(this, &CeilingTarget::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(10, sc_core::SC_NS);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct CeilingInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<CeilingInitiator> socket{"socket"};
  sc_core::sc_event start;
  uint64_t transactions = 0;
  double wall_s = 0.0;
  SC_HAS_PROCESS(CeilingInitiator);
  explicit CeilingInitiator(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_THREAD(run);
    sensitive << start;
    dont_initialize();
  }
  void run() {
    tlm_utils::tlm_quantumkeeper qk;
    qk.reset();
    uint8_t data[64] = {};
    tlm::tlm_generic_payload trans;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < transactions; ++i) {
      trans.set_command(i % 2 ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
      trans.set_address(i * 64);
      trans.set_data_ptr(data);
      trans.set_data_length(64);
      trans.set_streaming_width(64);
      trans.set_byte_enable_ptr(nullptr);
      trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = qk.get_local_time();
      socket->b_transport(trans, delay);
      qk.set(delay);
      if (qk.need_sync()) qk.sync();
    }
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

// Runs `options` in a forked child (SystemC elaborates once per process) and reads back what
// `measure` returns from its result; `what` names the run in errors.
template <size_t N>
std::array<double, N> run_in_child(
    const RunOptions& options, const char* what,
    const std::function<std::array<double, N>(const RunResult&)>& measure) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("bench: pipe() failed for the ") + what);
  std::cout.flush();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("bench: fork() failed for the ") + what);
  if (child == 0) {
    close(fds[0]);
    std::array<double, N> values;
    values.fill(-1.0);
    int status = 1;
    try {
      prepare_systemc();
      values = measure(simulate(options));
      status = 0;
    } catch (const std::exception& e) {
      std::cerr << "kvtier bench: the " << what << " failed: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "kvtier bench: the " << what << " failed\n";
    }
    const ssize_t written = write(fds[1], values.data(), sizeof values);
    _exit(written == static_cast<ssize_t>(sizeof values) ? status : 1);
  }
  close(fds[1]);
  std::array<double, N> values;
  const ssize_t got = read(fds[0], values.data(), sizeof values);
  close(fds[0]);
  const int status = wait_child(child);
  if (got != static_cast<ssize_t>(sizeof values) || !exited_zero(status))
    throw std::runtime_error(std::string("bench: the ") + what + " failed");
  return values;
}

}  // namespace kvtier::bench
