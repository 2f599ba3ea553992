#include "tlm/mem/memory_target.h"

namespace kvtier {

MemoryTarget::MemoryTarget(sc_core::sc_module_name name, double bytes_per_s,
                           sc_core::sc_time latency, uint64_t capacity_bytes)
    : sc_core::sc_module(name),
      transfer_time_(bytes_per_s),
      read_time_(bytes_per_s),
      write_time_(bytes_per_s),
      latency_(latency),
      capacity_bytes_(capacity_bytes) {
  in.register_b_transport(this, &MemoryTarget::transport);
}

void MemoryTarget::set_direction_rates(double read_bytes_per_s, double write_bytes_per_s) {
  read_time_ = TransferTime(read_bytes_per_s);
  write_time_ = TransferTime(write_bytes_per_s);
}

sc_core::sc_time MemoryTarget::reserve(const sc_core::sc_time& earliest, uint64_t bytes) {
  return hold(earliest, transfer_time_.of(bytes), bytes);
}

sc_core::sc_time MemoryTarget::hold(const sc_core::sc_time& earliest,
                                    const sc_core::sc_time& duration, uint64_t bytes) {
  stats_.busy_s += to_seconds(duration);
  const sc_core::sc_time start = channel_.reserve(earliest, duration);
  if (keep_ledger_) ledger_.push_back({to_seconds(start), to_seconds(start + duration), bytes});
  return start;
}

sc_core::sc_time MemoryTarget::serve(bool is_read, uint64_t length,
                                     const sc_core::sc_time& issued) {
  hold(issued, (is_read ? read_time_ : write_time_).of(length), length);
  // The access ends when its reservation does (start + duration, computed once in reserve()).
  (is_read ? stats_.read_bytes : stats_.write_bytes) += length;
  stats_.accesses += 1;
  return channel_.busy_until() + latency_;
}

void MemoryTarget::transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t length = trans.get_data_length();
  if (trans.get_address() + length > capacity_bytes_) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const sc_core::sc_time now = sim_now();
  delay = serve(trans.is_read(), length, now + delay) - now;
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

sc_core::sc_time MemoryTarget::burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                                     const sc_core::sc_time& at) {
  if (address + length > capacity_bytes_)
    report_failed_access(cls, address, std::string(name()) + ": address beyond the memory");
  return serve(is_read, length, at);
}

// The bursts served one after the other by burst() (called non-virtually, in one loop).
void MemoryTarget::burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                               TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done,
                               size_t n) {
  for (size_t k = 0; k < n; ++k)
    done[k] = MemoryTarget::burst(is_read, address + static_cast<uint64_t>(k) * burst_bytes,
                                  train_burst_length(burst_bytes, total, k), cls, at[k]);
}

}  // namespace kvtier
