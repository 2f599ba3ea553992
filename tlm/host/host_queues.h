#pragma once
// The host's command queues as claim C3 counts their work (host.submission_queues,
// host.completion): which queue a command goes to, where a batch needs a doorbell of its own,
// and what noticing completions costs the host CPU. The device sees the commands in the order
// the host posts them either way: per-tenant rings drained in posting order, each run of one
// tenant's commands kicked by that tenant's doorbell. How a device arbitrates between rings is
// not modelled here.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tlm/host/host_config.h"
#include "tlm/host/host_stats.h"

namespace kvtier {

class HostQueues {
 public:
  HostQueues(const HostConfig& config, CommandStats& stats) : config_(config), stats_(stats) {}

  // The queue of a command about a block of `tenant` (always 0 when shared); the first command
  // of a tenant opens its queue.
  uint32_t queue_of(uint16_t tenant) {
    const uint32_t q = config_.submission_queues == SubmissionQueues::PerTenant ? tenant : 0;
    if (q >= opened_.size()) opened_.resize(q + 1, 0);
    if (!opened_[q]) {
      opened_[q] = 1;
      ++stats_.command_queues;
    }
    return q;
  }
  // One queue's run of commands was posted and kicked: with interrupts, its completions raise
  // one interrupt (coalesced over the run).
  void run_posted() {
    if (config_.completion != CompletionNotice::Interrupt) return;
    ++stats_.interrupts;
    stats_.cpu_interrupt_s += config_.interrupt_cpu_ns * 1e-9;
    total();
  }
  // One scheduler step: with polling, the runtime reads the head of every completion queue
  // open so far (at least the shared one).
  void step() {
    if (config_.completion != CompletionNotice::Poll) return;
    const uint64_t queues = std::max<uint64_t>(stats_.command_queues, 1);
    stats_.completion_polls += queues;
    stats_.cpu_poll_s += static_cast<double>(queues) * config_.poll_cpu_ns * 1e-9;
    total();
  }
  // host_cpu_kv_s: the sum of every activity's CPU time.
  void total() {
    CommandStats& s = stats_;
    s.host_cpu_kv_s = s.cpu_descriptor_s + s.cpu_doorbell_s + s.cpu_completion_s +
                      s.cpu_copy_issue_s + s.cpu_interrupt_s + s.cpu_poll_s;
  }

 private:
  const HostConfig& config_;
  CommandStats& stats_;
  std::vector<uint8_t> opened_;  // by queue: it has carried a command
};

}  // namespace kvtier
