#pragma once
// The data plane as the platform sees it: the three sockets of tlm/ctrl's DataPlaneController
// (mmio_in from the link; tier_out to tier DRAM; host_out up the link to HBM and the completion
// ring) and the figures the run report reads. Two implementations: the TLM reference and the
// Verilated RTL engine behind transactors (rtl_data_plane.h). `ctrl.impl` picks one.
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/common/config.h"
#include "tlm/common/stat_group.h"
#include "tlm/ctrl/block_index.h"
#include "tlm/ctrl/controller.h"

namespace kvtier {

class DataPlane {
 public:
  virtual ~DataPlane() = default;
  virtual tlm::tlm_target_socket<>& mmio_in() = 0;
  virtual tlm::tlm_initiator_socket<>& tier_out() = 0;
  virtual tlm::tlm_initiator_socket<>& host_out() = 0;

  virtual const ControllerStats& stats() const = 0;
  // The index contents now (the RTL implementation reads its SRAM through a debug port, set by
  // set: a snapshot of the whole index, for the scoreboard's end-of-run comparison).
  virtual const BlockIndex& index() const = 0;
  // The index's geometry, without a snapshot.
  virtual uint32_t index_sets() const = 0;
  virtual uint32_t index_ways() const = 0;
  virtual uint32_t entry_bits() const = 0;
  virtual double footprint_kib() const = 0;
  virtual double footprint_mm2() const = 0;
  virtual sc_core::sc_time cycle() const = 0;
  virtual std::string implementation() const = 0;
  // Timeline of DMA engines and link transfers (the TLM reference model records them; the RTL
  // engine's own schedule is in its waves).
  virtual void set_trace(TraceEventLog*) {}
  // The host waits for the completion of the command tagged `tag`, from `at`: an implementation
  // that holds transfers (the TLM model in deadline order) schedules up to it now; one that
  // holds none has posted every completion with its doorbell already.
  virtual void wait_for(uint16_t /*tag*/, const sc_core::sc_time& /*at*/) {}
  virtual void wait_for_all() {}
  // host.decision = device: the device issues `d` itself at `at`, a member of a chain the host
  // handed it (tlm/ctrl/controller.h, issue_local); its completion goes to `*out`, not over the
  // link. False: this implementation has no chain walker (the RTL engine).
  virtual bool issue_local(const cmdset::Descriptor& /*d*/, const sc_core::sc_time& /*at*/,
                           cmdset::Completion* /*out*/) {
    return false;
  }
  virtual bool issues_locally() const { return false; }
  // The direct burst path (tlm/common/burst_target.h): the targets tier_out and host_out are
  // bound to. An implementation without one keeps its bursts on the sockets.
  virtual void set_burst_targets(BurstTarget* /*tier*/, BurstTarget* /*host*/) {}
  // A head of a multi-headed device (tier.shared): the index it looks up is `shared`, the
  // device's one. False: this implementation keeps its own (the RTL engine's is in its SRAM).
  virtual bool share_index(BlockIndex& /*shared*/) { return false; }

  // The engine's figures in stats.json, whichever implementation ran: the `index` group, its
  // transfer-order part of `prefetch`, and `index_organisation`. `config` is the one it was built
  // with.
  void declare_index_stats(StatGroup& index) const;
  void declare_transfer_order_stats(StatGroup& prefetch, const CtrlConfig& config) const;
  void declare_index_organisation_stats(StatGroup& group, const CtrlConfig& config) const;
};

// stats.json's `index_organisation` group from `ix`'s index counts: one controller's, or a
// cluster's sum over its replicas (ControllerStats::add_index_organisation).
void declare_index_organisation(StatGroup& g, const ControllerStats& ix, const CtrlConfig& config);

// An MMIO write seen at the data plane's mmio_in (ring slot or doorbell), at absolute time
// `at`. Used to record the host's descriptor stream.
using MmioObserver =
    std::function<void(const tlm::tlm_generic_payload& trans, const sc_core::sc_time& at)>;

// The TLM reference controller as a DataPlane; with an observer, every MMIO write is shown
// to it before the controller sees it.
class TlmDataPlane final : public sc_core::sc_module, public DataPlane {
 public:
  TlmDataPlane(sc_core::sc_module_name name, const CtrlConfig& config,
               MmioObserver observer = nullptr);

  tlm::tlm_target_socket<>& mmio_in() override;
  tlm::tlm_initiator_socket<>& tier_out() override { return ctrl_.tier_out; }
  tlm::tlm_initiator_socket<>& host_out() override { return ctrl_.host_out; }
  const ControllerStats& stats() const override { return ctrl_.stats(); }
  const BlockIndex& index() const override { return ctrl_.index(); }
  uint32_t index_sets() const override { return ctrl_.index().sets(); }
  uint32_t index_ways() const override { return ctrl_.index().ways(); }
  uint32_t entry_bits() const override { return ctrl_.entry_bits(); }
  double footprint_kib() const override { return ctrl_.footprint_kib(); }
  double footprint_mm2() const override { return ctrl_.footprint_mm2(); }
  sc_core::sc_time cycle() const override { return ctrl_.cycle(); }
  std::string implementation() const override { return "tlm"; }
  void set_trace(TraceEventLog* trace) override { ctrl_.set_trace(trace); }
  void wait_for(uint16_t tag, const sc_core::sc_time& at) override { ctrl_.resolve(tag, at); }
  void wait_for_all() override { ctrl_.resolve_all(); }
  bool issue_local(const cmdset::Descriptor& d, const sc_core::sc_time& at,
                   cmdset::Completion* out) override {
    *out = ctrl_.issue_local(d, at);
    return true;
  }
  bool issues_locally() const override { return true; }
  void set_burst_targets(BurstTarget* tier, BurstTarget* host) override {
    ctrl_.set_burst_targets(tier, host);
  }
  bool share_index(BlockIndex& shared) override {
    ctrl_.share_index(shared);
    return true;
  }
  const DataPlaneController& controller() const { return ctrl_; }

 private:
  void tap(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

  DataPlaneController ctrl_;
  MmioObserver observer_;
  tlm_utils::simple_target_socket<TlmDataPlane> tap_in_{"tap_in"};
  tlm_utils::simple_initiator_socket<TlmDataPlane> tap_out_{"tap_out"};
};

// Builds the data plane `config.impl` names. A process-wide observer (set_mmio_observer)
// is attached to a TLM data plane: `kvtier cosim --workload` records a normal run's stream.
std::unique_ptr<DataPlane> make_data_plane(const char* name, const CtrlConfig& config);
void set_mmio_observer(MmioObserver observer);

namespace cosim {
// Why `config` cannot run on the compiled RTL engine (first offending key and both values),
// or empty when it can.
std::string rtl_config_mismatch(const CtrlConfig& config);
}  // namespace cosim

}  // namespace kvtier
