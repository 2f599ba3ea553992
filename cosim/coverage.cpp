#include "cosim/coverage.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kvtier::cosim {

using cmdset::Opcode;
using cmdset::Status;

namespace {

// The outcomes the command set allows per opcode (tools/cmdset/kvdp_cmdset.tbl): every
// opcode that looks an entry up can MISS or be DENIED; NOP always completes OK; an
// undefined opcode always BAD_OPCODE. DEMOTE's OK splits into a new copy and a write-once
// skip. Impossible pairs get no bin, so full coverage is reachable.
std::vector<std::string> legal_outcomes(Opcode op) {
  switch (op) {
    case Opcode::NOP:
      return {"OK"};
    case Opcode::DEMOTE:
      return {"OK", "OK+WRITE_ONCE_SKIP", "DENIED", "NO_SPACE"};
    case Opcode::FREE:
      return {"OK", "MISS", "DENIED", "PINNED"};
    case Opcode::RECOMPRESS:
      return {"OK+TIER_REWRITTEN", "MISS", "DENIED"};
    default:
      return {"OK", "MISS", "DENIED"};
  }
}

std::string outcome(const cmdset::Completion& c) {
  std::string s = cmdset::to_string(c.status);
  if (c.flags & static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP)) s += "+WRITE_ONCE_SKIP";
  if (c.flags & static_cast<uint8_t>(cmdset::CplFlag::TIER_REWRITTEN)) s += "+TIER_REWRITTEN";
  return s;
}

constexpr uint8_t kLastOpcode = static_cast<uint8_t>(Opcode::QUERY);

}  // namespace

FunctionalCoverage::FunctionalCoverage(const QueueDepths& depths) : depths_(depths) {
  for (uint8_t op = 0; op <= kLastOpcode; ++op)
    for (const std::string& o : legal_outcomes(static_cast<Opcode>(op)))
      declare(std::string("opcode_status/") + cmdset::to_string(static_cast<Opcode>(op)) + "/" + o);
  declare("opcode_status/UNDEFINED/BAD_OPCODE");
  for (const char* corner :
       {"descriptor_ring_wrap", "completion_ring_wrap", "full_set_no_space", "hazard_stall",
        "tenant_mismatch_denied", "backpressure/desc", "backpressure/cpl", "backpressure/dma_req",
        "burst/max_length", "burst/short_last", "burst/exact_multiple_last",
        "transfer/multi_burst"})
    declare(std::string("corner/") + corner);
  for (const auto& [queue, depth] : {std::pair<const char*, uint32_t>{"intake", depths_.intake},
                                     {"xfer", depths_.xfer},
                                     {"cpl", depths_.cpl},
                                     {"outstanding", depths_.outstanding}})
    for (const char* lvl : {"empty", "low", "high", "full"}) {
      if (depth <= 2 && std::string(lvl) == "high") continue;  // no room between low and full
      declare(std::string("occupancy/") + queue + "/" + lvl);
    }
  const char* queues[] = {"intake", "xfer", "cpl", "outstanding"};
  const char* levels[] = {"empty", "low", "high", "full"};
  for (int q = 0; q < 4; ++q)
    for (int l = 0; l < 4; ++l) {
      auto it = bins_.find(std::string("occupancy/") + queues[q] + "/" + levels[l]);
      occupancy_[q][l] = it == bins_.end() ? nullptr : &it->second;
    }
  hazard_ = &bins_.at("corner/hazard_stall");
}

uint64_t* FunctionalCoverage::counter(uint32_t queue, uint32_t count, uint32_t depth) {
  int l = 1;
  if (count == 0) l = 0;
  else if (count >= depth) l = 3;
  else if (depth > 2 && 2 * count >= depth) l = 2;
  return occupancy_[queue][l];
}

void FunctionalCoverage::hit(const std::string& bin, uint64_t n) {
  auto it = bins_.find(bin);
  if (it == bins_.end()) throw std::logic_error("functional coverage: undeclared bin " + bin);
  it->second += n;
}

void FunctionalCoverage::completion(uint8_t opcode, const cmdset::Completion& c) {
  if (opcode > kLastOpcode) {
    hit("opcode_status/UNDEFINED/" + outcome(c));
    return;
  }
  const std::string name = std::string("opcode_status/") +
                           cmdset::to_string(static_cast<Opcode>(opcode)) + "/" + outcome(c);
  if (!bins_.count(name))
    throw std::logic_error("functional coverage: outcome outside the command set: " + name);
  hit(name);
  if (c.status == Status::NO_SPACE) hit("corner/full_set_no_space");
  if (c.status == Status::DENIED) hit("corner/tenant_mismatch_denied");
  if (c.bursts > 1) hit("corner/transfer/multi_burst");
}

void FunctionalCoverage::burst(uint32_t length, bool last, uint32_t max_burst_bytes) {
  if (length == max_burst_bytes) hit("corner/burst/max_length");
  if (last && length < max_burst_bytes) hit("corner/burst/short_last");
  if (last && length == max_burst_bytes) hit("corner/burst/exact_multiple_last");
}

void FunctionalCoverage::sample(const EngineProbe& p) {
  ++*counter(0, p.intake_count, depths_.intake);
  ++*counter(1, p.xfer_count, depths_.xfer);
  ++*counter(2, p.cpl_count, depths_.cpl);
  ++*counter(3, p.outstanding, depths_.outstanding);
  if (p.hazard_stall) ++*hazard_;
}

uint64_t FunctionalCoverage::covered() const {
  uint64_t n = 0;
  for (const auto& [name, count] : bins_) n += count > 0;
  return n;
}

std::vector<std::string> FunctionalCoverage::uncovered() const {
  std::vector<std::string> out;
  for (const auto& [name, count] : bins_)
    if (count == 0) out.push_back(name);
  return out;
}

std::string FunctionalCoverage::to_json() const {
  nlohmann::json j;
  j["bins"] = nlohmann::json::object();
  for (const auto& [name, count] : bins_) j["bins"][name] = count;
  j["covered"] = covered();
  j["total"] = total();
  j["uncovered"] = uncovered();
  return j.dump(2) + "\n";
}

}  // namespace kvtier::cosim
