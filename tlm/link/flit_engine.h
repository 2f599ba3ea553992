#pragma once
// How the flit protocols place what they send (link.flit_engine, docs/link.md "Fast flit
// engine").
//
// A protocol class (Pcie5Protocol, CxlFlitProtocol) states the rules: credits, framing, the
// TLP stream through flits, the DLLPs and credit returns owed the other way, retry. It places
// every unit by those rules, one at a time; that is the reference engine. At each point where
// it would place a run of like units one by one (the TLPs of a message, the owed DLLPs due
// before a message, the lines of a CXL.mem message), it first asks the engine it was built
// with, a strategy chosen once from `link.flit_engine`:
//   reference  takes nothing: every unit goes by the rules;
//   fast       places the whole run at once where it can show that the rules would place it
//              so (closed forms, a placement remembered from the same relative situation, one
//              placed in local arithmetic and committed as one run), and otherwise leaves it,
//              having changed nothing, to the rules.
// Both give the same counts and times; tests/link (FlitEngine.*) and tools/same_outputs.sh
// compare them. Each protocol has its engine interface, for the state it places on
// (pcie5_flit_engine.h, cxl_flit_engine.h); the choice and the thresholds below are shared.
#include <cstdint>

namespace kvtier {

struct BulkThresholds {
  // Runs of fewer units go unit by unit in the fast engine too: its checks cost more than
  // they save.
  static constexpr uint64_t kMinUnits = 4;
  // A run the closed form cannot take whole often can after its first units (those whose
  // credits bind go one by one, the rest stream): tried again this many times, a unit further
  // each time.
  static constexpr int kRetries = 8;
};

}  // namespace kvtier
