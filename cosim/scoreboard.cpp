#include "cosim/scoreboard.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "tlm/common/timeline.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/transact.h"
#include "tlm/mem/memories.h"

namespace kvtier::cosim {

namespace {

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// Records every transaction a data plane issues on one socket, then forwards it.
class TxnTap : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TxnTap> in{"in"};
  tlm_utils::simple_initiator_socket<TxnTap> out{"out"};
  std::function<void(tlm::tlm_generic_payload&, const sc_core::sc_time&)> on_txn;

  explicit TxnTap(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    in.register_b_transport(this, &TxnTap::transport);
  }

 private:
  void transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    on_txn(trans, sim_now() + delay);
    out->b_transport(trans, delay);
  }
};

// Host memory: takes the completion writes.
// Terminates the link's downstream path, which the bench does not use (see BenchSide).
class Unused : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Unused> out{"out"};
  tlm_utils::simple_target_socket<Unused> in{"in"};
  explicit Unused(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    in.register_b_transport(this, &Unused::transport);
  }

 private:
  void transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
};

class CompletionSink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<CompletionSink> in{"in"};
  explicit CompletionSink(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    in.register_b_transport(this, &CompletionSink::transport);
  }

 private:
  void transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
    trans.set_response_status(trans.is_write() ? tlm::TLM_OK_RESPONSE
                                               : tlm::TLM_COMMAND_ERROR_RESPONSE);
  }
};

Distribution distribution(std::vector<int64_t> v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  d.min = v.front();
  d.max = v.back();
  d.p1 = at(0.01);
  d.p50 = at(0.50);
  d.p99 = at(0.99);
  double sum = 0;
  for (int64_t x : v) {
    sum += static_cast<double>(x);
    d.nonzero += x != 0;
  }
  d.mean = sum / static_cast<double>(v.size());
  return d;
}

}  // namespace

uint64_t Distribution::max_abs() const {
  return std::max<uint64_t>(static_cast<uint64_t>(std::llabs(min)),
                            static_cast<uint64_t>(std::llabs(max)));
}

// One side of the bench: a data plane with its own link, memories and completion sink. MMIO
// writes go to the data plane directly at their posted time, so both sides see every
// doorbell at the same instant (in a recorded stream that is when the platform's controller saw
// it); the link carries the data plane's own traffic: bursts and completions.
class BenchSide : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<BenchSide> mmio_out{"mmio_out"};
  std::unique_ptr<DataPlane> plane;
  std::vector<Outcome> outcomes;

  BenchSide(sc_core::sc_module_name name, const BenchConfig& c, std::unique_ptr<DataPlane> dp)
      : sc_core::sc_module(name),
        plane(std::move(dp)),
        link_("link", make_link_protocol(c.link)),
        hbm_(make_hbm("hbm", c.hbm)),
        tier_(make_tier_dram("tier", c.tier)),
        bus_("host_bus"),
        sink_("host_memory"),
        unused_("unused_downstream"),
        tier_tap_("tier_tap"),
        host_tap_("host_tap") {
    mmio_out.bind(plane->mmio_in());
    unused_.out.bind(link_.host_in);
    link_.device_out.bind(unused_.in);
    plane->tier_out().bind(tier_tap_.in);
    tier_tap_.out.bind(tier_->in);
    plane->host_out().bind(host_tap_.in);
    host_tap_.out.bind(link_.device_in);
    link_.host_out.bind(bus_.in);
    bus_.add_window(addr::kHbmBase, hbm_->capacity_bytes());
    bus_.out.bind(hbm_->in);
    bus_.add_window(addr::kHostMemBase, addr::kHostMemSize);
    bus_.out.bind(sink_.in);
    tier_tap_.on_txn = [this](tlm::tlm_generic_payload& t, const sc_core::sc_time&) {
      current_.push_back(
          Txn{Txn::Target::Tier, t.is_write(), t.get_address(), t.get_data_length()});
    };
    host_tap_.on_txn = [this](tlm::tlm_generic_payload& t, const sc_core::sc_time& at) {
      if (t.is_write() && t.get_address() >= addr::kCompletionRing) {
        outcomes.push_back(
            Outcome{cmdset::decode_completion(t.get_data_ptr()), at, std::move(current_)});
        current_.clear();
        if (on_completion) on_completion();
        return;
      }
      current_.push_back(
          Txn{Txn::Target::Host, t.is_write(), t.get_address(), t.get_data_length()});
    };
  }

  std::function<void()> on_completion;

 private:
  Link link_;
  std::unique_ptr<MemoryTarget> hbm_, tier_;
  AddressRouter bus_;
  CompletionSink sink_;
  Unused unused_;
  TxnTap tier_tap_, host_tap_;
  std::vector<Txn> current_;
};

CosimBench::CosimBench(sc_core::sc_module_name name, const BenchConfig& config,
                       std::unique_ptr<EngineModel> engine)
    : sc_core::sc_module(name),
      config_(config),
      ring_(static_cast<size_t>(config.ctrl.ring_entries) * 64) {
  // The TLM side's tap shows the bench every MMIO write as the data planes receive it.
  auto tlm_plane = std::make_unique<TlmDataPlane>(
      "tlm_ctrl", config.ctrl,
      [this](const tlm::tlm_generic_payload& t, const sc_core::sc_time& at) {
        const uint64_t addr = t.get_address();
        if (addr == addr::kDoorbell) {
          doorbell_seen(cmdset::decode_doorbell(t.get_data_ptr()).tail, at);
        } else if (addr + t.get_data_length() <= ring_.size()) {
          std::copy_n(t.get_data_ptr(), t.get_data_length(),
                      ring_.begin() + static_cast<std::ptrdiff_t>(addr));
        }
      });
  tlm_ = std::make_unique<BenchSide>("tlm", config, std::move(tlm_plane));
  auto rtl_plane = std::make_unique<RtlDataPlane>("rtl_ctrl", config.ctrl, std::move(engine),
                                                  RtlDataPlane::Mode::Lazy, config.backpressure);
  rtl_plane_ = rtl_plane.get();
  rtl_ = std::make_unique<BenchSide>("rtl", config, std::move(rtl_plane));
}

CosimBench::~CosimBench() = default;

std::vector<MmioWrite> to_mmio_writes(const Stimulus& s, uint32_t ring_entries) {
  std::vector<MmioWrite> out;
  uint32_t tail = 0;
  for (const DoorbellBatch& b : s.batches) {
    for (const cmdset::Descriptor& d : b.descriptors) {
      MmioWrite w{addr::kRingBase + uint64_t(tail) * cmdset::kDescriptorBytes,
                  std::vector<uint8_t>(cmdset::kDescriptorBytes), b.at};
      cmdset::encode(d, w.data.data());
      out.push_back(std::move(w));
      tail = (tail + 1) % ring_entries;
    }
    MmioWrite bell{addr::kDoorbell, std::vector<uint8_t>(cmdset::kDoorbellBytes), b.at};
    cmdset::encode(cmdset::Doorbell{tail}, bell.data.data());
    out.push_back(std::move(bell));
  }
  return out;
}

MmioObserver CosimBench::recorder() {
  return [this](const tlm::tlm_generic_payload& t, const sc_core::sc_time& at) {
    recorded_.push_back(MmioWrite{
        t.get_address(),
        std::vector<uint8_t>(t.get_data_ptr(), t.get_data_ptr() + t.get_data_length()), at});
  };
}

void CosimBench::replay(const std::vector<MmioWrite>& writes, const sc_core::sc_time& base) {
  base_ = base;
  for (const MmioWrite& w : writes) {
    if (mismatch_) return;
    post(w, base);
  }
}

void CosimBench::post(const MmioWrite& w, const sc_core::sc_time& base) {
  std::vector<uint8_t> data = w.data;
  const bool doorbell = w.addr == addr::kDoorbell;
  for (BenchSide* side : {tlm_.get(), rtl_.get()})
    transact(side->mmio_out, tlm::TLM_WRITE_COMMAND, w.addr, data.data(),
             static_cast<uint32_t>(data.size()),
             doorbell ? TxnClass::Doorbell : TxnClass::DescriptorWrite, base + w.at);
  if (doorbell) compare();
}

void CosimBench::doorbell_seen(uint32_t tail, const sc_core::sc_time& at) {
  ++doorbells_;
  const uint64_t arrival = static_cast<uint64_t>(at.value() / rtl_plane_->cycle().value());
  while (head_ != tail) {
    descriptors_.push_back(
        cmdset::decode_descriptor(&ring_[static_cast<size_t>(head_) * cmdset::kDescriptorBytes]));
    arrival_cycle_.push_back(arrival);
    head_ = (head_ + 1) % config_.ctrl.ring_entries;
  }
}

std::string CosimBench::describe(uint64_t i) const {
  std::ostringstream os;
  if (i < descriptors_.size()) {
    const cmdset::Descriptor& d = descriptors_[i];
    os << "  descriptor #" << i << ": " << cmdset::to_string(d.opcode) << " (opcode "
       << unsigned(d.opcode) << ") tag " << d.tag << " tenant " << d.tenant << " key " << hex(d.key)
       << " flags " << unsigned(d.flags) << " format " << unsigned(d.format) << " hbm_addr "
       << hex(d.hbm_addr) << " tier_addr " << hex(d.tier_addr) << " length " << d.length
       << "\n    doorbell arrival cycle " << arrival_cycle_[i] << "\n";
  }
  auto side = [&](const char* name, const BenchSide& s) {
    os << "  " << name << ": ";
    if (i >= s.outcomes.size()) {
      os << "no completion (" << s.outcomes.size() << " completions so far)\n";
      return;
    }
    const Outcome& o = s.outcomes[i];
    const cmdset::Completion& c = o.completion;
    os << "completion tag " << c.tag << " status " << cmdset::to_string(c.status) << " flags "
       << unsigned(c.flags) << " bursts " << c.bursts << " ts_accepted " << c.ts_accepted
       << " ts_lookup_done " << c.ts_lookup_done << " ts_transfer_done " << c.ts_transfer_done
       << " (engine cycles), posted " << std::fixed << std::setprecision(3)
       << (o.posted - base_).to_seconds() * 1e9 << std::defaultfloat
       << " ns into the stream\n    transactions (" << o.txns.size() << "):";

    const size_t shown = std::min<size_t>(o.txns.size(), 8);
    for (size_t k = 0; k < shown; ++k) {
      const Txn& t = o.txns[k];
      os << (k ? ", " : " ") << (t.target == Txn::Target::Tier ? "tier " : "host ")
         << (t.write ? "write " : "read ") << hex(t.addr) << "+" << t.length;
    }
    if (shown < o.txns.size()) os << ", ...";
    os << "\n";
  };
  side("TLM", *tlm_);
  side("RTL", *rtl_);
  return os.str();
}

void CosimBench::fail(uint64_t i, const std::string& what) {
  mismatch_ = true;
  mismatch_index_ = i;
  mismatch_field_ = what;
  std::ostringstream os;
  const sc_core::sc_time when =
      i < tlm_->outcomes.size() ? tlm_->outcomes[i].posted
                                : (i < rtl_->outcomes.size() ? rtl_->outcomes[i].posted : base_);
  os << "cosim MISMATCH at descriptor #" << i << " of " << descriptors_.size()
     << " (simulated time " << (when > base_ ? when - base_ : sc_core::SC_ZERO_TIME)
     << " into the stream, RTL engine cycle " << rtl_plane_->engine_cycle() << "): " << what << "\n"
     << describe(i);
  report_ = os.str();
}

void CosimBench::compare() {
  if (mismatch_) return;
  const uint64_t n = std::min(tlm_->outcomes.size(), rtl_->outcomes.size());
  for (; compared_ < n; ++compared_) {
    const uint64_t i = compared_;
    const Outcome& t = tlm_->outcomes[i];
    const Outcome& r = rtl_->outcomes[i];
    if (i >= descriptors_.size()) return fail(i, "completion without a descriptor");
    const uint16_t tag = descriptors_[i].tag;
    if (t.completion.tag != tag) return fail(i, "TLM completion out of order (bench error)");
    if (r.completion.tag != tag)
      return fail(i, "completion order: RTL completed tag " + std::to_string(r.completion.tag) +
                         " where descriptor tag " + std::to_string(tag) + " was next");
    if (t.completion.status != r.completion.status) return fail(i, "status differs");
    if (t.completion.flags != r.completion.flags) return fail(i, "flags differ");
    if (t.completion.bursts != r.completion.bursts) return fail(i, "burst count differs");
    if (t.txns.size() != r.txns.size()) return fail(i, "number of DMA transactions differs");
    for (size_t k = 0; k < t.txns.size(); ++k)
      if (!(t.txns[k] == r.txns[k]))
        return fail(i, "DMA transaction " + std::to_string(k) + " differs");
  }
}

void CosimBench::compare_index() {
  const BlockIndex& a = tlm_->plane->index();
  const BlockIndex& b = rtl_->plane->index();
  std::ostringstream os;
  auto entry = [&](const IndexEntry& e) {
    std::ostringstream s;
    if (!e.valid) return std::string("invalid");
    s << "tag " << hex(e.tag) << " tenant " << e.tenant << " shareable " << e.shareable
      << " pinned " << e.pinned << " hbm_resident " << e.hbm_resident << " hbm_addr "
      << hex(e.hbm_addr) << " tier_addr " << hex(e.tier_addr) << " length " << e.length
      << " format " << unsigned(e.format) << " qos " << unsigned(e.qos) << " prio " << e.prio
      << " policy " << hex(e.policy);
    return s.str();
  };
  for (uint32_t s = 0; s < a.sets(); ++s) {
    for (uint32_t w = 0; w < a.ways(); ++w) {
      const IndexEntry& x = a.at({s, w});
      const IndexEntry& y = b.at({s, w});
      const bool same =
          x.valid == y.valid &&
          (!x.valid ||
           (x.tag == y.tag && x.tenant == y.tenant && x.shareable == y.shareable &&
            x.pinned == y.pinned && x.hbm_resident == y.hbm_resident && x.hbm_addr == y.hbm_addr &&
            x.tier_addr == y.tier_addr && x.length == y.length && x.format == y.format &&
            x.qos == y.qos && x.prio == y.prio && x.policy == y.policy));
      if (!same) {
        mismatch_ = true;
        index_mismatch_ = true;
        mismatch_index_ = descriptors_.size();
        mismatch_field_ =
            "final index differs at set " + std::to_string(s) + " way " + std::to_string(w);
        os << "cosim MISMATCH in the final index contents at set " << s << " way " << w
           << " (after all " << descriptors_.size() << " descriptors)\n"
           << "  TLM: " << entry(x) << "\n  RTL: " << entry(y) << "\n";
        report_ = os.str();
        return;
      }
      index_entries_ += x.valid;
    }
  }
}

CosimResult CosimBench::finish() {
  CosimResult r;
  if (!finished_ && !mismatch_) {
    rtl_plane_->drain();
    compare();
    if (!mismatch_ && (tlm_->outcomes.size() != descriptors_.size() ||
                       rtl_->outcomes.size() != descriptors_.size()))
      fail(std::min(tlm_->outcomes.size(), rtl_->outcomes.size()),
           rtl_plane_->stalled() ? rtl_plane_->stall_reason()
                                 : "a side did not complete every descriptor");
    if (!mismatch_) compare_index();
  }
  finished_ = true;
  rtl_plane_->finish();
  r.mismatch = mismatch_;
  r.mismatch_report = report_;
  r.mismatch_descriptor = mismatch_index_;
  r.mismatch_field = mismatch_field_;
  r.index_mismatch = index_mismatch_;
  r.reference_completions.reserve(tlm_->outcomes.size());
  for (const Outcome& o : tlm_->outcomes) r.reference_completions.push_back(o.completion);
  r.stream = descriptors_;
  r.descriptors = descriptors_.size();
  r.compared = compared_;
  r.doorbells = doorbells_;
  r.index_entries = index_entries_;
  r.rtl_speed = rtl_plane_->speed();
  r.rtl_assertion_failures = rtl_plane_->assertion_failures();
  r.rtl_ports = rtl_plane_->activity();
  r.tolerance_cycles = static_cast<uint64_t>(config_.ctrl.cosim_timing_tolerance_cycles);

  std::vector<int64_t> issue_diff, lookup_diff, tlm_issue, rtl_issue, tlm_lookup, rtl_lookup,
      transfer_diff, completion_diff;
  const double cycle_ps = static_cast<double>(rtl_plane_->cycle().value());
  for (uint64_t i = 0; i < compared_; ++i) {
    const cmdset::Completion& t = tlm_->outcomes[i].completion;
    const cmdset::Completion& q = rtl_->outcomes[i].completion;
    const int64_t a = static_cast<int64_t>(arrival_cycle_[i]);
    const int64_t ti = static_cast<int64_t>(t.ts_accepted) - a,
                  ri = static_cast<int64_t>(q.ts_accepted) - a;
    const int64_t tl = static_cast<int64_t>(t.ts_lookup_done - t.ts_accepted);
    const int64_t rl = static_cast<int64_t>(q.ts_lookup_done - q.ts_accepted);
    tlm_issue.push_back(ti);
    rtl_issue.push_back(ri);
    tlm_lookup.push_back(tl);
    rtl_lookup.push_back(rl);
    issue_diff.push_back(ri - ti);
    lookup_diff.push_back(rl - tl);
    transfer_diff.push_back(static_cast<int64_t>(q.ts_transfer_done) -
                            static_cast<int64_t>(t.ts_transfer_done));
    completion_diff.push_back(
        static_cast<int64_t>((static_cast<double>(rtl_->outcomes[i].posted.value()) -
                              static_cast<double>(tlm_->outcomes[i].posted.value())) /
                             cycle_ps));
  }
  TimingReport& tr = r.timing;
  tr.issue_diff = distribution(issue_diff);
  tr.lookup_diff = distribution(lookup_diff);
  tr.tlm_issue = distribution(tlm_issue);
  tr.rtl_issue = distribution(rtl_issue);
  tr.tlm_lookup = distribution(tlm_lookup);
  tr.rtl_lookup = distribution(rtl_lookup);
  tr.transfer_diff = distribution(transfer_diff);
  tr.completion_diff = distribution(completion_diff);
  // The rule (docs/cosim.md): every descriptor's lookup latency and completion time, and the
  // median issue latency, within the tolerance. The issue latency's tail is reported, not
  // bounded: the RTL's transfer queue is finite (XferQueueDepth + MaxOutstanding transfers),
  // the TLM model's is not, so under a burst of transfers the RTL holds descriptors back.
  const uint64_t median_issue = static_cast<uint64_t>(std::llabs(tr.issue_diff.p50));
  if (tr.lookup_diff.max_abs() > r.tolerance_cycles ||
      tr.completion_diff.max_abs() > r.tolerance_cycles || median_issue > r.tolerance_cycles) {
    r.timing_ok = false;
    std::ostringstream os;
    os << "timing differences exceed ctrl.cosim_timing_tolerance_cycles = " << r.tolerance_cycles
       << ": largest |RTL - TLM| lookup latency " << tr.lookup_diff.max_abs()
       << " cycles, completion time " << tr.completion_diff.max_abs()
       << " cycles; median issue latency difference " << median_issue << " cycles";
    r.timing_failure = os.str();
  }
  return r;
}

CosimResult run_random_cosim(const BenchConfig& config, uint64_t count, uint64_t seed,
                             std::unique_ptr<EngineModel> engine, FunctionalCoverage* coverage) {
  CosimBench bench("cosim", config, std::move(engine));
  bench.rtl_plane().set_coverage(coverage);
  const Stimulus s = random_stimulus(
      count, seed, config.ctrl, static_cast<uint64_t>(config.hbm.capacity_gb * 1e9),
      static_cast<uint64_t>(config.tier.capacity_gib * (1ull << 30)), config.link.bytes_per_s());
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // completes elaboration; the replay needs no process
  bench.replay(to_mmio_writes(s, config.ctrl.ring_entries), sc_core::SC_ZERO_TIME);
  return bench.finish();
}

std::string format_result(const CosimResult& r) {
  std::ostringstream os;
  auto line = [&](const char* name, const Distribution& d) {
    os << "  " << std::left << std::setw(30) << name << std::right << " n " << d.count << "  min "
       << d.min << "  p1 " << d.p1 << "  p50 " << d.p50 << "  p99 " << d.p99 << "  max " << d.max
       << "  mean " << std::fixed << std::setprecision(2) << d.mean << "  nonzero " << d.nonzero
       << "\n";
  };
  os << "descriptors " << r.descriptors << " in " << r.doorbells << " doorbells; compared "
     << r.compared << "; final index entries compared " << r.index_entries << "\n";
  // By command, so that a reader sees what the stream exercised (UPDATE_POLICY: the policy plane).
  std::array<uint64_t, 16> by_opcode{};
  for (const cmdset::Descriptor& d : r.stream)
    if (static_cast<size_t>(d.opcode) < by_opcode.size())
      ++by_opcode[static_cast<size_t>(d.opcode)];
  os << "  by command:";
  for (size_t op = 0; op < by_opcode.size(); ++op)
    if (by_opcode[op])
      os << " " << cmdset::to_string(static_cast<cmdset::Opcode>(op)) << " " << by_opcode[op];
  os << "\n";
  if (r.mismatch) os << r.mismatch_report;
  else
    os << "mismatches: 0 (status, flags, bursts, DMA transactions, completion order, final "
          "index)\n";
  os << "timing, cycles (issue = ts_accepted - doorbell arrival, lookup = ts_lookup_done - "
        "ts_accepted):\n";
  line("issue latency   RTL - TLM", r.timing.issue_diff);
  line("lookup latency  RTL - TLM", r.timing.lookup_diff);
  line("issue latency   TLM", r.timing.tlm_issue);
  line("issue latency   RTL", r.timing.rtl_issue);
  line("lookup latency  TLM", r.timing.tlm_lookup);
  line("lookup latency  RTL", r.timing.rtl_lookup);
  line("ts_transfer_done RTL - TLM", r.timing.transfer_diff);
  line("completion post RTL - TLM", r.timing.completion_diff);
  os << "timing tolerance " << r.tolerance_cycles
     << " cycles: " << (r.timing_ok ? "met" : r.timing_failure) << "\n";
  if (r.rtl_assertion_failures)
    os << "RTL assertion failures: " << r.rtl_assertion_failures
       << " (the kvdp assertion messages above)\n";
  return os.str();
}

}  // namespace kvtier::cosim
