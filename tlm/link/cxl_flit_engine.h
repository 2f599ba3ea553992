#pragma once
// The engines the CXL flit protocol places its units with (flit_engine.h). The protocol
// (cxl_flit_protocol.h) places every unit by the rules, one at a time, and first offers each run
// of units to its engine: the reference engine takes none; the fast engine
// (cxl_fast_flit_engine.h) takes what it can place at once with the rules' counts and times.
#include <cstdint>
#include <memory>

#include "tlm/link/cxl_link_state.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

// One CXL.mem line as the rules placed it (ticks): what the fast engine's period search records.
struct CxlMemLine {
  Ticks usable = 0;  // start of the first flit it could use
  Ticks last_bit = 0;
  uint64_t slots = 0;
  bool waited = false;  // its credit held it back
};

class CxlFlitEngine {
 public:
  virtual ~CxlFlitEngine() = default;
  // Before the rules place `msg`: true when the engine placed it (`t` filled), continuing a run
  // whose commit it had left for later; else it commits whatever the message's placement depends
  // on, and the rules go on.
  virtual bool continue_deferred(const LinkMessage& msg, const sc_core::sc_time& earliest,
                                 LinkTransfer& t) = 0;
  // Commits every run left for later (flush, statistics).
  virtual void commit_deferred() = 0;
  // Of the `due` owed DLLPs at the front of d.owed_dllps, how many it sent at once (0: the rules
  // send the next one).
  virtual uint64_t settle_dllps(CxlDirection& d, uint64_t due) = 0;
  // A CXL.io message's run of identical TLPs, whole: true when placed. `may_defer`: the message's
  // last run, whose commit may wait for the next message.
  virtual bool send_tlps(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                         const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                         bool may_defer) = 0;
  // How many times, while the rules send a run TLP by TLP, the rest of it is offered to
  // send_tlp_run.
  virtual int tlp_run_retries() const = 0;
  // The closed form alone, for the rest of a run (send_tlps tries it first too).
  virtual bool send_tlp_run(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                            const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                            bool may_defer) = 0;
  // A CXL.mem message of `lines` lines of `kind` starts; after each line the rules placed, the
  // lines after it the engine placed at once (0: none), of `lines_left`.
  virtual void start_mem_message(MemMsg kind, uint64_t lines) = 0;
  virtual uint64_t after_mem_line(CxlDirection& tx, CxlDirection& back, const CxlMemLine& placed,
                                  uint64_t lines_left, const sc_core::sc_time& earliest,
                                  LinkTransfer& t) = 0;
  // Messages placed by continuing a deferred run, per direction (wire statistics).
  virtual uint64_t continued_messages(Direction d) const = 0;
};

// The engine `which` names, on `rules` and `dirs` (both must outlive it).
std::unique_ptr<CxlFlitEngine> make_cxl_flit_engine(FlitEngine which, const CxlRules& rules,
                                                    CxlDirections& dirs);

}  // namespace kvtier
