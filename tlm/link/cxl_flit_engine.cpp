#include "tlm/link/cxl_flit_engine.h"

#include "tlm/link/cxl_fast_flit_engine.h"

namespace kvtier {

namespace {

// Takes nothing: the rules place every TLP, DLLP and CXL.mem line one by one.
class CxlReferenceFlitEngine final : public CxlFlitEngine {
 public:
  bool continue_deferred(const LinkMessage&, const sc_core::sc_time&, LinkTransfer&) override {
    return false;
  }
  void commit_deferred() override {}
  uint64_t settle_dllps(CxlDirection&, uint64_t) override { return 0; }
  bool send_tlps(CxlDirection&, CxlDirection&, const TlpRun&, const sc_core::sc_time&,
                 LinkTransfer&, bool&, bool) override {
    return false;
  }
  int tlp_run_retries() const override { return 0; }
  bool send_tlp_run(CxlDirection&, CxlDirection&, const TlpRun&, const sc_core::sc_time&,
                    LinkTransfer&, bool&, bool) override {
    return false;
  }
  void start_mem_message(MemMsg, uint64_t) override {}
  uint64_t after_mem_line(CxlDirection&, CxlDirection&, const CxlMemLine&, uint64_t,
                          const sc_core::sc_time&, LinkTransfer&) override {
    return 0;
  }
  uint64_t continued_messages(Direction) const override { return 0; }
};

}  // namespace

std::unique_ptr<CxlFlitEngine> make_cxl_flit_engine(FlitEngine which, const CxlRules& rules,
                                                    CxlDirections& dirs) {
  if (which == FlitEngine::Fast) return std::make_unique<CxlFastFlitEngine>(rules, dirs);
  return std::make_unique<CxlReferenceFlitEngine>();
}

}  // namespace kvtier
