#pragma once
// The host<->device link as a TLM interconnect. Downstream traffic (host -> device: descriptor
// and doorbell writes) enters at host_in and leaves at device_out; upstream traffic (device ->
// host: DMA to and from HBM, completion writes) enters at device_in and leaves at host_out.
// A write carries its payload in the forward direction; a read sends a request forward and
// its data back the other way. Time comes from the protocol's per-direction serialisation
// plus its pipeline latency; no SystemC event is spent per flit.
#include <array>
#include <memory>
#include <vector>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/common/burst_target.h"
#include "tlm/common/stat_group.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/root_complex.h"

namespace kvtier {

struct LinkClassStats {
  uint64_t messages = 0;
  uint64_t payload_bytes = 0;
  uint64_t wire_bytes = 0;
  uint64_t units = 0;  // TLPs or flits the class's messages opened
  uint64_t slots = 0;  // CXL.mem: 16 B slots occupied
  uint64_t replays = 0;
  double credit_wait_s = 0.0;    // time messages waited for receiver credits
  double serialisation_s = 0.0;  // wire time of all messages of the class
  double latency_s_total = 0.0;  // sum of end-to-end latencies of whole transactions
};

struct LinkStats {
  std::array<LinkClassStats, static_cast<size_t>(TxnClass::Count)> per_class{};
  std::array<double, 2> busy_s{};  // serialisation time per direction
  uint64_t payload_bytes() const;
  uint64_t wire_bytes() const;
};

class Link : public sc_core::sc_module, public BurstTarget {
 public:
  tlm_utils::simple_target_socket<Link> host_in{"host_in"};
  tlm_utils::simple_initiator_socket<Link> device_out{"device_out"};
  tlm_utils::simple_target_socket<Link> device_in{"device_in"};
  tlm_utils::simple_initiator_socket<Link> host_out{"host_out"};

  Link(sc_core::sc_module_name name, std::unique_ptr<LinkProtocol> protocol);

  const LinkStats& stats() const { return stats_; }
  // Device-initiated DMA payload through the host's root complex at most `gbps` per direction
  // (link.root_complex_dma_gbps; 0: the link alone limits it).
  void set_root_complex_dma(double gbps) { root_complex_ = RootComplexLimit(gbps); }
  const LinkProtocol& protocol() const { return *protocol_; }
  // stats.json's `link_classes` (one object per traffic class that carried a transaction) and
  // `link_busy_s`, into the run's top-level group.
  void declare_stats(StatGroup& run) const;

  // The direct burst path (burst_target.h) of upstream traffic: a device burst crosses the link
  // as one entering device_in would, then goes to `host_side` (what host_out is bound to).
  void set_host_side(BurstTarget* host_side) { host_side_ = host_side; }
  sc_core::sc_time burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                         const sc_core::sc_time& at) override;
  // A transfer's writes: every burst's message placed by the protocol in order, the host side's
  // train served at their arrivals, then each transaction's latency counted. A read's request and
  // data (and a write the protocol completes) go burst by burst: its answer depends on the far
  // side's, and the protocol must see the messages of both directions in their order.
  void burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                   TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done,
                   size_t n) override;

 private:
  void downstream_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void upstream_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void traverse(Direction dir, tlm_utils::simple_initiator_socket<Link>& out,
                tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void account(TxnClass cls, const LinkTransfer& t, uint64_t payload, Direction dir);
  // A transaction's forward message (the write with its payload, or the read request), sent and
  // counted; returns when it reaches the far side. cross() and burst_train() both start here.
  sc_core::sc_time forward(Direction dir, TxnClass cls, bool is_read, uint64_t length,
                           const sc_core::sc_time& issued);
  // A whole transaction counted once, with its end-to-end latency.
  void count_transaction(TxnClass cls, const sc_core::sc_time& issued,
                         const sc_core::sc_time& done);
  // One whole transaction across the link from `issued`: the forward message, `deliver` at the
  // far side (given the arrival time, returns when the target is done, and whether it accepted),
  // then a write's completion or a read's data back. Returns when the initiator has its answer.
  // Both paths (sockets and direct) cross through here, so they place and count alike.
  template <typename Deliver>
  sc_core::sc_time cross(Direction dir, TxnClass cls, bool is_read, uint64_t length,
                         const sc_core::sc_time& issued, Deliver&& deliver);
  BurstTarget* host_side_ = nullptr;
  std::vector<sc_core::sc_time>
      train_arrivals_;  // burst_train: when each write reaches the far side

  std::unique_ptr<LinkProtocol> protocol_;
  RootComplexLimit root_complex_;
  LinkStats stats_;
};

}  // namespace kvtier
