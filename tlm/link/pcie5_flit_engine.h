#pragma once
// The engines PCIe 5.0 places its units with (flit_engine.h): the reference engine takes nothing
// in bulk; the fast engine sends owed DLLPs and runs of identical TLPs in closed form.
#include <array>
#include <memory>

#include "tlm/link/credit_pool.h"
#include "tlm/link/link_config.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/link_wire.h"
#include "tlm/link/pcie_tlp.h"
#include "tlm/link/time_queue.h"

namespace kvtier {

// One direction of a PCIe link: what the rules (pcie5_protocol.h) and the engines place on.
struct Pcie5Direction {
  Pcie5Direction(const LinkConfig& c, const LinkWireParams& p, Direction d)
      : wire(p, d),
        credits{CreditPool(c.credits_posted), CreditPool(c.credits_non_posted),
                CreditPool(c.credits_completion)} {}
  LinkWire wire;
  std::array<CreditPool, static_cast<size_t>(FlowClass::Count)>
      credits;                 // receiver's header credits
  uint64_t tlps_received = 0;  // by the far end, for the ACK / UpdateFC ratio
  TimeQueue owed;              // DLLPs waiting to go out on this direction: when each could leave
};

// What the rules and the engines both read: the configuration, the TLP framing and the one-way
// port latency.
struct Pcie5Rules {
  LinkConfig config;
  TlpFraming framing;
  sc_core::sc_time latency;
};

class Pcie5FlitEngine {
 public:
  virtual ~Pcie5FlitEngine() = default;
  // Of the `due` owed DLLPs at the front of d.owed, how many it sent at once (0: the rules send
  // the next one).
  virtual uint64_t settle_dllps(Pcie5Direction& d, uint64_t due) = 0;
  // How many times, while the rules send a run TLP by TLP, the rest of it is offered to
  // send_tlp_run.
  virtual int tlp_run_retries() const = 0;
  // `run.count` identical TLPs at once; false, having changed nothing, when a credit or the
  // retry buffer would hold one back.
  virtual bool send_tlp_run(Pcie5Direction& tx, Pcie5Direction& back, const TlpRun& run,
                            const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) = 0;
};

// The engine `which` names, on `rules` (which must outlive it).
std::unique_ptr<Pcie5FlitEngine> make_pcie5_flit_engine(FlitEngine which, const Pcie5Rules& rules);

}  // namespace kvtier
