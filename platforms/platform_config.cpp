#include "platforms/platform_config.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

#include "cosim/data_plane.h"
#include "workloads/interval_distribution.h"
#include "tlm/host/policy/policy.h"
#include "tlm/kv/qos_targets.h"
#include "workloads/model.h"

namespace po = boost::program_options;

namespace kvtier {
namespace {

// One declared key: how to parse it into the config, how to print it, and its allowed range.
struct Key {
  std::string name;         // section.key
  std::string description;
  std::string range;        // human-readable allowed values
  std::function<void(const std::string& value, const std::string& where)> set;
  std::function<std::string()> get;
};

class KeyRegistry {
 public:
  template <typename T>
  void number(const std::string& name, T* field, double lo, double hi, const std::string& description) {
    std::ostringstream range;
    range << "[" << lo << ", " << hi << "]";
    const std::string range_text = range.str();
    keys_.push_back({name, description, range_text,
                     [=](const std::string& value, const std::string& where) {
                       double v = 0;
                       size_t used = 0;
                       try {
                         v = std::stod(value, &used);
                       } catch (const std::exception&) {
                         used = 0;
                       }
                       while (used < value.size() && std::isspace(static_cast<unsigned char>(value[used]))) ++used;
                       if (used != value.size() || value.empty())
                         throw ConfigError(where + ": key '" + name + "' has value '" + value + "', which is not a number");
                       if (std::is_integral<T>::value && v != std::floor(v))
                         throw ConfigError(where + ": key '" + name + "' = " + value + " must be a whole number");
                       if (!(v >= lo && v <= hi))
                         throw ConfigError(where + ": key '" + name + "' = " + value + " is outside the allowed range " +
                                           range_text);
                       *field = static_cast<T>(v);
                     },
                     [=]() {
                       std::ostringstream os;
                       os << std::setprecision(12) << *field;
                       return os.str();
                     }});
  }
  // A choice stored as an enum: `names` pairs each accepted word with its value.
  template <typename E>
  void choice_enum(const std::string& name, E* field, const std::vector<std::pair<std::string, E>>& names,
                   const std::string& description) {
    std::string range = "one of";
    for (const auto& n : names) range += " " + n.first;
    keys_.push_back({name, description, range,
                     [=](const std::string& value, const std::string& where) {
                       for (const auto& n : names)
                         if (value == n.first) {
                           *field = n.second;
                           return;
                         }
                       throw ConfigError(where + ": key '" + name + "' = '" + value + "' is not " + range);
                     },
                     [=]() {
                       for (const auto& n : names)
                         if (*field == n.second) return n.first;
                       return std::string("?");
                     }});
  }
  // A choice stored as the word itself.
  void choice(const std::string& name, std::string* field, const std::vector<std::string>& allowed,
              const std::string& description) {
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto& a : allowed) names.emplace_back(a, a);
    choice_enum(name, field, names, description);
  }
  void text(const std::string& name, std::string* field, const std::string& description) {
    keys_.push_back({name, description, "text", [=](const std::string& value, const std::string&) { *field = value; },
                     [=]() { return *field; }});
  }
  void flag(const std::string& name, bool* field, const std::string& description) {
    keys_.push_back({name, description, "true or false",
                     [=](const std::string& value, const std::string& where) {
                       if (value == "true" || value == "1") *field = true;
                       else if (value == "false" || value == "0") *field = false;
                       else throw ConfigError(where + ": key '" + name + "' = '" + value + "' is not true or false");
                     },
                     [=]() { return std::string(*field ? "true" : "false"); }});
  }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  std::vector<Key> keys_;
};

constexpr double kMaxU32 = 4294967295.0;

void declare_model_keys(KeyRegistry& r, ModelConfig& c) {
  std::vector<std::string> models = workload::known_models();
  r.choice("model.name", &c.name, models, "built-in served model (workloads/models/NAME.json); model.config replaces it");
  r.text("model.config", &c.config,
         "Hugging Face config.json of the served model (path, or workloads/models/NAME.json of the built-ins); "
         "empty: model.name");
  r.number("model.weight_dtype_bytes", &c.weight_dtype_bytes, 0.25, 4, "bytes per weight (1 = FP8, 2 = bf16)");
  r.number("model.kv_dtype_bytes", &c.kv_dtype_bytes, 1, 4, "bytes per KV element (2 = bf16)");
  r.number("model.tensor_parallel", &c.tensor_parallel, 1, 64,
           "GPUs per replica (tensor parallel, dividing the KV heads); the platform simulates one of them: W/N weights, KV/N per token");
}

void declare_hbm_keys(KeyRegistry& r, HbmConfig& c) {
  r.number("hbm.capacity_gb", &c.capacity_gb, 1, 1e4, "GPU memory capacity, GB (1e9 B)");
  r.number("hbm.peak_bw_gbps", &c.peak_bw_gbps, 1, 1e5, "GPU memory peak bandwidth, GB/s");
  r.number("hbm.achievable_fraction", &c.achievable_fraction, 0.01, 1,
           "achievable (STREAM-like) bandwidth A as a fraction of peak; the eta_* keys are fractions of A");
  r.number("hbm.eta_weights", &c.eta_weights, 0.01, 1, "effective fraction of achievable bandwidth when streaming weights");
  r.number("hbm.eta_kv", &c.eta_kv, 0.01, 1, "effective fraction of achievable bandwidth when attention reads KV");
  r.number("hbm.eta_dma", &c.eta_dma, 0.01, 1, "effective fraction of achievable bandwidth for promotion/demotion bursts");
  r.number("hbm.latency_ns", &c.latency_ns, 0, 1e5, "access latency seen by a DMA burst, ns");
  r.number("hbm.kv_budget_gib", &c.kv_budget_gib, 0.001, 1e4, "HBM reserved for KV blocks, GiB");
  r.number("hbm.activation_reserve_gib", &c.activation_reserve_gib, 0, 1e4, "HBM reserved for activations, GiB");
}

void declare_link_keys(KeyRegistry& r, LinkConfig& c) {
  r.choice("link.protocol", &c.protocol, {"simple", "pcie5", "cxl2", "cxl3", "cxl3-lopt"},
           "link protocol model (docs/link.md)");
  r.choice("link.flit_engine", &c.flit_engine, {"fast", "reference"},
           "pcie5/CXL: fast = bursts in closed form, reference = flit by flit (same counts without bit errors)");
  r.number("link.lanes", &c.lanes, 1, 32, "lanes");
  r.number("link.gt_per_s", &c.gt_per_s, 1, 256, "transfer rate per lane, GT/s");
  r.number("link.encoding_efficiency", &c.encoding_efficiency, 0.5, 1, "line-code efficiency (128/130 for PCIe 5)");
  r.number("link.latency_ns", &c.latency_ns, 0, 1e5, "fixed pipeline latency per traversal and direction, ns");
  r.number("link.txn_overhead_bytes", &c.txn_overhead_bytes, 0, 4096, "simple: wire bytes added per transaction");
  r.number("link.max_payload_bytes", &c.max_payload_bytes, 16, 4096,
           "simple: payload bytes per transaction; pcie5 / CXL.io: max payload size (128..4096, a power of two)");
  r.number("link.host_port_ns", &c.host_port_ns, 0, 1e5, "host-side port pipeline per traversal, ns (flit protocols)");
  r.number("link.device_port_ns", &c.device_port_ns, 0, 1e5, "device-side port pipeline per traversal, ns (flit protocols)");
  r.number("link.fec_decode_ns", &c.fec_decode_ns, 0, 1e4, "256 B flits: FEC decode time per traversal, ns");
  r.number("link.max_read_request_bytes", &c.max_read_request_bytes, 128, 4096,
           "PCIe max read request size, B (a power of two); larger reads become several requests");
  r.number("link.read_completion_boundary_bytes", &c.read_completion_boundary_bytes, 64, 128, "PCIe RCB, 64 or 128 B");
  r.flag("link.completions_at_rcb", &c.completions_at_rcb, "the completer splits read data at every RCB (else at MPS)");
  r.flag("link.tlp_64bit_addresses", &c.tlp_64bit_addresses, "memory requests carry 4DW (16 B) headers, else 3DW (12 B)");
  r.flag("link.ecrc", &c.ecrc, "4 B end-to-end CRC per TLP");
  r.number("link.tlps_per_ack", &c.tlps_per_ack, 1, 256, "one ACK DLLP per this many TLPs received");
  r.number("link.tlps_per_update_fc", &c.tlps_per_update_fc, 1, 256, "one UpdateFC DLLP per this many TLPs received");
  r.number("link.credits_posted", &c.credits_posted, 1, 65536, "receiver header credits: posted writes");
  r.number("link.credits_non_posted", &c.credits_non_posted, 1, 65536, "receiver header credits: read requests");
  r.number("link.credits_completion", &c.credits_completion, 1, 65536, "receiver header credits: completions");
  r.number("link.credits_m2s_req", &c.credits_m2s_req, 1, 65536, "CXL.mem receiver credits: M2S Req");
  r.number("link.credits_m2s_rwd", &c.credits_m2s_rwd, 1, 65536, "CXL.mem receiver credits: M2S RwD");
  r.number("link.credits_s2m_drs", &c.credits_s2m_drs, 1, 65536, "CXL.mem receiver credits: S2M DRS");
  r.number("link.credits_s2m_ndr", &c.credits_s2m_ndr, 1, 65536, "CXL.mem receiver credits: S2M NDR");
  r.number("link.credit_return_interval_ns", &c.credit_return_interval_ns, 0, 1e6,
           "a credit-only flit (LLCRD) goes when no protocol flit leaves within this time, ns");
  r.flag("link.multi_data_header", &c.multi_data_header, "CXL.mem MDH: several DRS headers per slot (68B H5/G6)");
  r.number("link.max_owed_data_slots", &c.max_owed_data_slots, 0, 1024,
           "a CXL.mem data header is packed only while at most this many data slots are owed");
  r.number("link.bit_error_rate", &c.bit_error_rate, 0, 1e-3, "bit-error rate on the wire; failed flits/TLPs are replayed");
  r.number("link.error_seed", &c.error_seed, 0, kMaxU32, "seed of the bit-error process");
  r.number("link.retry_buffer_units", &c.retry_buffer_units, 1, 65536, "retry-buffer depth, flits (CXL) or TLPs (PCIe)");
  r.number("link.replay_latency_ns", &c.replay_latency_ns, 0, 1e6, "failed unit's last bit to its replay's first bit, ns");
}

void declare_tier_keys(KeyRegistry& r, TierConfig& c) {
  r.number("tier.capacity_gib", &c.capacity_gib, 0.001, 1e6, "tier DRAM capacity, GiB");
  r.number("tier.bw_gbps", &c.bw_gbps, 0.1, 1e5, "tier DRAM bandwidth, GB/s");
  r.number("tier.latency_ns", &c.latency_ns, 0, 1e5, "tier DRAM access latency, ns");
}

void declare_ctrl_keys(KeyRegistry& r, CtrlConfig& c) {
  r.choice_enum("ctrl.impl", &c.impl, {{"tlm", DataPlaneImpl::Tlm}, {"rtl", DataPlaneImpl::Rtl}}, "data-plane implementation: TLM reference or the Verilated RTL engine");
  r.number("ctrl.clock_mhz", &c.clock_mhz, 1, 1e4, "controller clock, MHz");
  r.number("ctrl.index_sets", &c.index_sets, 1, 1 << 30, "index sets (a power of two)");
  r.number("ctrl.index_ways", &c.index_ways, 1, 64, "index ways per set");
  r.number("ctrl.index_read_cycles", &c.index_read_cycles, 1, 1000, "SRAM read latency of one lookup, cycles");
  r.number("ctrl.key_tag_bits", &c.key_tag_bits, 1, 64, "key tag bits per entry");
  r.number("ctrl.tier_addr_bits", &c.tier_addr_bits, 1, 64, "tier address bits per entry (block slots)");
  r.number("ctrl.hbm_slot_bits", &c.hbm_slot_bits, 1, 64, "HBM slot bits per entry");
  r.number("ctrl.policy_bits", &c.policy_bits, 0, 256, "policy bits replicated on the device per entry");
  r.number("ctrl.mechanism_bits", &c.mechanism_bits, 1, 64, "mechanism bits per entry (valid, resident, pinned, format)");
  r.number("ctrl.tenant_bits", &c.tenant_bits, 1, 16, "tenant bits per entry");
  r.number("ctrl.length_bits", &c.length_bits, 1, 32, "payload length bits per entry");
  r.number("ctrl.sram_mib_per_mm2", &c.sram_mib_per_mm2, 1, 1000, "SRAM macro density for the footprint in mm2, Mib/mm2");
  r.number("ctrl.ring_entries", &c.ring_entries, 2, 1 << 20, "descriptor ring entries");
  r.number("ctrl.intake_cycles", &c.intake_cycles, 1, 1000, "descriptor intake and decode, cycles per descriptor");
  r.number("ctrl.dma_engines", &c.dma_engines, 1, 64, "DMA engines");
  r.number("ctrl.max_burst_bytes", &c.max_burst_bytes, 64, 1 << 24, "largest DMA burst, bytes");
  r.number("ctrl.dma_engine_gbps", &c.dma_engine_gbps, 0.1, 1e4, "throughput of one DMA engine, GB/s");
  r.number("ctrl.completion_cycles", &c.completion_cycles, 0, 1000, "completion formatting, cycles");
  // kvtier cosim fails when the RTL engine's timing leaves the TLM model's by more than this:
  // any descriptor's lookup latency or completion time, or the median issue latency (docs/cosim.md).
  r.number("ctrl.cosim_timing_tolerance_cycles", &c.cosim_timing_tolerance_cycles, 0, 1e9,
           "kvtier cosim: largest |RTL - TLM| lookup latency and completion time, and median issue latency, cycles");
  r.choice_enum("ctrl.transfer_order", &c.transfer_order, {{"fifo", TransferOrder::Fifo}, {"deadline", TransferOrder::Deadline}},
           "transfer order among a doorbell's commands: ring order, or earliest descriptor deadline first");
  r.choice_enum("ctrl.index_org", &c.index_org, {{"full", IndexOrg::Full}, {"cached", IndexOrg::Cached}},
           "index organisation: full SRAM index, or an SRAM cache of a table in tier DRAM");
  r.number("ctrl.index_cache_entries", &c.index_cache_entries, 1, 1 << 30,
           "cached index: entries the SRAM cache holds (fully associative, LRU)");
  r.number("ctrl.index_entry_bytes", &c.index_entry_bytes, 1, 4096, "cached index: tier DRAM bytes read per missed entry");
  r.number("ctrl.index_dram_read_ns", &c.index_dram_read_ns, 0, 1e6,
           "cached index: tier DRAM read of one missed entry on the lookup path, ns");
  r.number("ctrl.compress_gbps", &c.compress_gbps, 0, 1e5,
           "compression engine throughput, GB/s of uncompressed data; 0 = not modelled (no time)");
  r.number("ctrl.compress_latency_ns", &c.compress_latency_ns, 0, 1e6, "compression engine pipeline latency per burst, ns");
  r.number("ctrl.fp8_bytes_ratio", &c.fp8_bytes_ratio, 0.01, 1, "stored bytes of an fp8 tier copy per bf16 byte");
  r.number("ctrl.int4_bytes_ratio", &c.int4_bytes_ratio, 0.01, 1, "stored bytes of an int4 tier copy per bf16 byte");
  r.text("ctrl.wave_file", &c.wave_file,
         "ctrl.impl = rtl: write an FST waveform of the RTL engine into this file (GTKWave opens it); empty = none");
  r.number("ctrl.wave_start_cycle", &c.wave_start_cycle, 0, static_cast<double>(CtrlConfig::kWaveWholeRun),
           "first engine clock cycle dumped into the waveform (kvtier run: ctrl.wave_file; kvtier cosim: --trace)");
  r.number("ctrl.wave_end_cycle", &c.wave_end_cycle, 1, static_cast<double>(CtrlConfig::kWaveWholeRun),
           "engine clock cycle the waveform stops before; the default is the whole run");
}

void declare_host_keys(KeyRegistry& r, HostConfig& c) {
  r.choice("host.policy", &c.policy, replacement_policy_names(),
           "replacement policy (docs/policies.md)");
  r.flag("host.persistent_policy", &c.persistent_policy,
         "a block's policy state survives eviction and re-admission (spec §M.2.3, claim C4)");
  r.number("host.ema_alpha", &c.ema_alpha, 1e-9, 1, "ema: weight of the newest reference in the reuse average");
  r.choice("host.ema_clock", &c.ema_clock, {"second", "reference"},
           "ema: the score decays by (1 - alpha) per second of simulated time, or per block reference");
  r.number("host.admission_horizon_s", &c.admission_horizon_s, 1e-6, 1e9, "admission: horizon H, s");
  r.number("host.admission_lambda_s", &c.admission_lambda_s, 1e-9, 1e12,
           "admission: residency seconds that one avoided move of a block is worth");
  r.text("host.tenant_qos", &c.tenant_qos,
         "priority, admission: QoS class (0..255, higher is kept longer) per tenant, comma-separated; missing: 0");
  r.number("host.block_tokens", &c.block_tokens, 1, 1 << 16, "tokens per KV block");
  r.number("host.layers_per_block", &c.layers_per_block, 0, 1024, "layers per block; 0 = all layers");
  r.number("host.prefetch_horizon_steps", &c.prefetch_horizon_steps, 0, 4096,
           "steps of look-ahead for prefetch with deadlines (0: promote on admission only)");
  r.number("host.descriptor_cpu_ns", &c.descriptor_cpu_ns, 0, 1e6, "host CPU time to build and post one descriptor, ns");
  r.flag("host.free_dead_blocks", &c.free_dead_blocks, "FREE a session's own blocks once the session has ended");
  r.choice_enum("host.session_end", &c.session_end, {{"idle", SessionEnd::Idle}, {"last_turn", SessionEnd::LastTurn}},
                "how a session is known to have ended: idle for host.session_idle_s (what a server can know), or "
                "the workload's last-turn flag (an oracle, for comparison)");
  r.number("host.session_idle_s", &c.session_idle_s, 1e-6, 1e9,
           "session_end = idle: seconds without a new turn after which a session has ended, s");
  r.choice_enum("host.tier_format", &c.tier_format,
                {{"bf16", TierFormat::Bf16}, {"fp8", TierFormat::Fp8}, {"int4", TierFormat::Int4}},
                "representation of new tier copies");
  r.choice_enum("host.recompress_format", &c.recompress_format,
                {{"none", Recompress::None}, {"fp8", Recompress::Fp8}, {"int4", Recompress::Int4}},
           "RECOMPRESS a wider tier copy to this format when its block is evicted again (breaks write-once)");
  r.choice_enum("host.dma", &c.dma, {{"device", HostDma::Device}, {"host", HostDma::Host}},
           "who moves KV: the device data plane from descriptors, or host-issued copies");
  r.number("host.copy_issue_cpu_ns", &c.copy_issue_cpu_ns, 0, 1e7, "host DMA: CPU time of one copy call, ns");
  r.number("host.copy_completion_rtt_us", &c.copy_completion_rtt_us, 0, 1e6,
           "host DMA: from a copy's end until the host knows it is done, us");
  r.number("host.doorbell_cpu_ns", &c.doorbell_cpu_ns, 0, 1e7, "CPU time of one doorbell write, ns (accounted, C3)");
  r.number("host.completion_cpu_ns", &c.completion_cpu_ns, 0, 1e7, "CPU time to handle one completion, ns (accounted, C3)");
  r.number("host.sustain_window_s", &c.sustain_window_s, 1e-6, 1e6, "SUSTAINABILITY: demand window, s");
  r.choice_enum("host.decode_residency", &c.decode_residency,
                {{"pinned", DecodeResidency::Pinned}, {"streamed", DecodeResidency::Streamed}},
                "running requests' KV: pinned in HBM (preempt when it runs out), or streamed from the tier each step");
  r.flag("host.prefetch_next_turn", &c.prefetch_next_turn,
         "prefetch a finished request's context for its session's next turn, predicted from inter-turn gaps seen so far");
}

void declare_sched_keys(KeyRegistry& r, SchedConfig& c) {
  r.number("sched.max_decode_set", &c.max_decode_set, 1, 65536, "largest decode set (continuous batch)");
  r.number("sched.max_prefill_tokens", &c.max_prefill_tokens, 1, kMaxU32, "prompt tokens prefilled per step");
  r.number("sched.max_batched_tokens", &c.max_batched_tokens, 1, kMaxU32,
           "tokens per step: every decode token first, then prefill chunks (chunked prefill)");
  r.choice_enum("sched.preemption", &c.preemption, {{"swap", Preemption::Swap}, {"recompute", Preemption::Recompute}},
                "preempted request's KV: swap (kept, demoted as needed, promoted on resume) or recompute (prefilled again)");
  r.choice_enum("sched.kv_load", &c.kv_load,
                {{"async", KvLoad::Async}, {"layerwise", KvLoad::Layerwise}, {"blocking", KvLoad::Blocking}},
                "a loading request: waits outside the batch (async), joins with per-layer waits, or stalls the step");
  r.number("sched.stream_share", &c.stream_share, 0, 1,
           "streamed residency: share of B_tier the decode set's streamed KV may take per step; past it the scheduler "
           "preempts instead of spilling (0: stream only a context that does not fit alone)");
  r.number("sched.layer_overhead_us", &c.layer_overhead_us, 0, 1e5, "launch and sync overhead per layer per step, us");
  r.number("sched.prefill_tflops", &c.prefill_tflops, 1, 1e6, "peak dense throughput for prefill, TFLOP/s");
  r.number("sched.prefill_utilization", &c.prefill_utilization, 0.01, 1, "fraction of peak prefill achieves");
  r.number("sched.quantum_us", &c.quantum_us, 0.001, 1e9, "quantum keeper global quantum, us");
  // Two-bandwidth mode alone reads sched.layer_overhead_us and sched.prefill_* (the operator
  // model's launch costs and peaks are the [gpu] keys).
  r.choice_enum("sched.cost_model", &c.cost_model,
                {{"operators", CostModel::Operators}, {"two_bandwidth", CostModel::TwoBandwidth}},
                "step time: per operator ([gpu] keys, docs/model.md), or the two-bandwidth decode formula of spec "
                "Appendix L with compute-bound prefill (hbm.eta_weights, sched.layer_overhead_us, sched.prefill_*: "
                "read by two_bandwidth only)");
  r.number("sched.ttft_target_s", &c.ttft_target_s, 1e-6, 1e6, "QoS: time-to-first-token target of every tenant, s");
  r.number("sched.itl_target_s", &c.itl_target_s, 1e-6, 1e6, "QoS: inter-token latency target of every tenant, s");
  r.text("sched.tenant_qos", &c.tenant_qos, "QoS: per-tenant targets TENANT:TTFT_S:ITL_S[,...] overriding the two above");
  r.number("sched.qos_goal", &c.qos_goal, 0, 1, "QoS: fraction of requests (TTFT) and tokens (ITL) a tenant must meet");
}

void declare_workload_keys(KeyRegistry& r, WorkloadSection& c) {
  auto& s = c.synthetic;
  r.text("workload.spec", &c.spec, "workload used when --workload is not given");
  r.number("workload.sessions", &s.sessions, 1, 1e7, "synthetic: conversations");
  r.number("workload.tenants", &s.tenants, 1, 65535, "synthetic: tenants");
  r.number("workload.session_rate_per_s", &s.session_rate_per_s, 1e-6, 1e6, "synthetic: Poisson arrival rate of sessions, 1/s");
  r.number("workload.turns_mean", &s.turns_mean, 1, 1000, "synthetic: mean turns per session");
  r.number("workload.think_time_mean_s", &s.think_time_mean_s, 1e-6, 1e6, "synthetic: mean think time between turns, s");
  r.number("workload.system_prompt_tokens", &s.system_prompt_tokens, 0, 1e6, "synthetic: shared system prompt per tenant, tokens");
  r.number("workload.user_tokens_mean", &s.user_tokens_mean, 1, 1e6, "synthetic: mean new prompt tokens per turn");
  r.number("workload.output_tokens_mean", &s.output_tokens_mean, 1, 1e6, "synthetic: mean generated tokens per turn");
  r.number("workload.max_context_tokens", &s.max_context_tokens, 1, 1e7, "synthetic: a session ends before exceeding this");
  r.number("workload.document_share", &s.document_share, 0, 1, "synthetic: share of sessions opening with a long document");
  r.number("workload.document_tokens", &s.document_tokens, 0, 1e7, "synthetic: tokens of that document (first turn)");
  r.number("workload.nominal_itl_s", &s.nominal_itl_s, 0, 10, "synthetic: per-token time assumed when placing the next turn, s");
  using workload::IntervalShape;
  const std::vector<std::pair<std::string, IntervalShape>> shapes = {
      {"gamma", IntervalShape::kGamma}, {"weibull", IntervalShape::kWeibull}, {"lognormal", IntervalShape::kLognormal}};
  r.choice_enum("workload.arrival_distribution", &s.arrival_distribution, shapes,
                "synthetic: session inter-arrival distribution (cv = 1 gamma/weibull is Poisson)");
  r.number("workload.arrival_cv", &s.arrival_cv, 0, workload::IntervalDistribution::kMaxCv, "synthetic: coefficient of variation of inter-arrival times");
  r.choice_enum("workload.think_distribution", &s.think_distribution, shapes, "synthetic: think-time distribution");
  r.number("workload.think_time_cv", &s.think_time_cv, 0, workload::IntervalDistribution::kMaxCv, "synthetic: coefficient of variation of think times");
  using Scope = workload::SyntheticParams::SystemPromptScope;
  r.choice_enum("workload.system_prompt_scope", &s.system_prompt_scope,
                std::vector<std::pair<std::string, Scope>>{{"tenant", Scope::kTenant}, {"global", Scope::kGlobal}},
                "synthetic: system prompt shared per tenant or by all tenants");
}

void declare_gpu_keys(KeyRegistry& r, GpuConfig& c) {
  r.number("gpu.tflops_bf16", &c.tflops_bf16, 1, 1e6, "dense bf16 tensor-core peak, TFLOP/s");
  r.number("gpu.tflops_fp8", &c.tflops_fp8, 1, 1e6, "dense FP8 tensor-core peak, TFLOP/s (GEMMs of weights of 1 byte or less)");
  r.number("gpu.linear_eta_mem", &c.linear_eta_mem, 0.01, 1.2,
           "GEMM: bytes streamed at this fraction of achievable bandwidth A (eta_mem of a large GEMM)");
  r.number("gpu.linear_launch_us", &c.linear_launch_us, 0, 1e4, "GEMM: fixed cost of one GEMM on the memory side, us");
  r.number("gpu.linear_eta_flop", &c.linear_eta_flop, 0.01, 1, "GEMM: compute efficiency of a large GEMM, fraction of peak");
  r.number("gpu.linear_half_outputs", &c.linear_half_outputs, 0, 1e12,
           "GEMM: output elements (tokens x outputs) at which compute efficiency is half of gpu.linear_eta_flop");
  r.number("gpu.elementwise_eta", &c.elementwise_eta, 0.01, 1.2,
           "norms, residual adds, activation, rotary: bytes at this fraction of A");
  r.number("gpu.elementwise_launch_us", &c.elementwise_launch_us, 0, 1e4, "norms, adds, activation, rotary: fixed cost per kernel, us");
  r.number("gpu.attention_eta_flop", &c.attention_eta_flop, 0.01, 1, "prefill attention FLOPs at this fraction of the bf16 peak");
  r.number("gpu.allreduce_latency_us_2", &c.allreduce_latency_us_2, 0, 1e5, "all-reduce over 2 GPUs: latency, us");
  r.number("gpu.allreduce_latency_us_4", &c.allreduce_latency_us_4, 0, 1e5, "all-reduce over 3-4 GPUs: latency, us");
  r.number("gpu.allreduce_latency_us_8", &c.allreduce_latency_us_8, 0, 1e5, "all-reduce over 5 or more GPUs: latency, us");
  r.number("gpu.allreduce_gbps_2", &c.allreduce_gbps_2, 0.1, 1e5, "all-reduce over 2 GPUs: bytes of the buffer per second, GB/s");
  r.number("gpu.allreduce_gbps_4", &c.allreduce_gbps_4, 0.1, 1e5, "all-reduce over 3-4 GPUs: buffer GB/s");
  r.number("gpu.allreduce_gbps_8", &c.allreduce_gbps_8, 0.1, 1e5, "all-reduce over 5 or more GPUs: buffer GB/s");
}

void declare_sim_keys(KeyRegistry& r, SimConfig& c) {
  r.flag("sim.check_tlm_protocol", &c.check_tlm_protocol,
         "put a TLM-2.0 base-protocol checker on every socket binding (tlm/check); a violation is an error "
         "naming the socket and rule; stats.json gets tlm_protocol");
}

void declare_host_copy_keys(KeyRegistry& r, HostCopyConfig& c) {
  r.number("host_copy.bandwidth_gbps", &c.bandwidth_gbps, 0.1, 1e5,
           "host-issued pinned copy: asymptotic bandwidth B_inf, GB/s (T(n) = t0 + n / B_inf)");
  r.number("host_copy.call_overhead_us", &c.call_overhead_us, 0, 1e4, "host-issued copy: t0 of one copy call, us");
  r.number("host_copy.batched_call_overhead_us", &c.batched_call_overhead_us, 0, 1e4,
           "host-issued copy: t0 of each copy of a batched submission, us");
}

KeyRegistry declare_all(PlatformConfig& c) {
  KeyRegistry r;
  declare_model_keys(r, c.model);
  declare_hbm_keys(r, c.hbm);
  declare_link_keys(r, c.link);
  declare_tier_keys(r, c.tier);
  declare_ctrl_keys(r, c.ctrl);
  declare_host_keys(r, c.host);
  declare_sched_keys(r, c.sched);
  declare_gpu_keys(r, c.gpu);
  declare_host_copy_keys(r, c.host_copy);
  declare_workload_keys(r, c.workload);
  declare_sim_keys(r, c.sim);
  return r;
}

po::options_description boost_schema(const KeyRegistry& registry) {
  po::options_description desc;
  desc.add_options()("include", po::value<std::vector<std::string>>()->composing(), "file to include");
  for (const Key& k : registry.keys()) desc.add_options()(k.name.c_str(), po::value<std::string>(), k.description.c_str());
  return desc;
}

// Line of `section.key` in an INI text, for messages; 0 if not found.
int line_of(const std::string& text, const std::string& dotted) {
  const auto dot = dotted.find('.');
  const std::string section = dot == std::string::npos ? "" : dotted.substr(0, dot);
  const std::string key = dot == std::string::npos ? dotted : dotted.substr(dot + 1);
  std::istringstream in(text);
  std::string line, current;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    if (line[first] == '[') {
      current = line.substr(first + 1, line.find(']') - first - 1);
      continue;
    }
    std::string name = line.substr(first, line.find('=') - first);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (current == section && name == key) return n;
  }
  return 0;
}

// `text` with its [sweep] section (the grid of `kvtier sweep`, platforms/sweep.h) blanked
// out line by line, so that the platform keys keep their line numbers and a sweep file is
// also a platform file: its base point.
std::string without_sweep_section(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool in_sweep = false;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '[') {
      const auto close = line.find(']', first);
      std::string section = line.substr(first + 1, close == std::string::npos ? std::string::npos : close - first - 1);
      section.erase(0, section.find_first_not_of(" \t"));
      section.erase(section.find_last_not_of(" \t") + 1);
      in_sweep = section == "sweep";
    }
    out += (in_sweep ? "" : line) + "\n";
  }
  return out;
}

// The installed platform files: $KVTIER_PLATFORM_DIR, else PREFIX/share/kvtier/platforms
// beside the running binary (PREFIX/bin/kvtier) when that folder exists; "" if neither.
std::string installed_platform_dir() {
  if (const char* env = std::getenv("KVTIER_PLATFORM_DIR"); env && *env) return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = exe.parent_path().parent_path() / "share" / "kvtier" / "platforms";
  return std::filesystem::is_directory(dir, ec) ? dir.string() : "";
}

struct Loader {
  po::options_description schema;
  po::variables_map vm;
  std::map<std::string, std::string> where;  // key -> file:line that set it
  int depth = 0;
  // Set: includes resolve against the embedded platform set (paths under platforms/), not disk.
  const std::map<std::string, std::string>* embedded = nullptr;

  void parse(const std::string& text, const std::string& name, const std::string& base_dir) {
    if (++depth > 8) throw ConfigError(name + ": includes nested deeper than 8 (a cycle?)");
    std::istringstream in(without_sweep_section(text));
    po::parsed_options parsed(&schema);
    try {
      parsed = po::parse_config_file(in, schema, false);
    } catch (const po::unknown_option& e) {
      const int line = line_of(text, e.get_option_name());
      throw ConfigError(name + (line ? ":" + std::to_string(line) : "") + ": unknown key '" + e.get_option_name() + "'");
    } catch (const po::error& e) {
      throw ConfigError(name + ": " + e.what());
    }
    std::vector<std::string> includes;
    for (const auto& opt : parsed.options) {
      if (opt.string_key == "include") {
        includes.insert(includes.end(), opt.value.begin(), opt.value.end());
        continue;
      }
      if (!where.count(opt.string_key)) {
        const int line = line_of(text, opt.string_key);
        where[opt.string_key] = name + (line ? ":" + std::to_string(line) : "");
      }
    }
    try {
      po::store(parsed, vm);
    } catch (const po::multiple_occurrences& e) {
      const int line = line_of(text, e.get_option_name());
      throw ConfigError(name + (line ? ":" + std::to_string(line) : "") + ": key '" + e.get_option_name() +
                        "' is set more than once in this file");
    } catch (const po::error& e) {
      throw ConfigError(name + ": " + e.what());
    }
    // First stored value wins: the including file before its includes, the last include first.
    for (auto it = includes.rbegin(); it != includes.rend(); ++it) {
      if (embedded) {
        const std::filesystem::path key = (std::filesystem::path(base_dir) / *it).lexically_normal();
        const auto found = embedded->find(key.generic_string());
        if (found == embedded->end())
          throw ConfigError(name + ": cannot open included file '" + *it + "'; looked in the embedded platform set (platforms/" +
                            key.generic_string() + ")");
        parse(found->second, "platforms/" + key.generic_string() + " (embedded)", key.parent_path().generic_string());
        continue;
      }
      // Search order: relative to the including file, the installed platform directory, the
      // embedded set; a name without .ini also matches NAME.ini ("include = h200-cxl2-x16").
      namespace fs = std::filesystem;
      const fs::path inc = *it;
      const std::string installed = installed_platform_dir();
      std::vector<fs::path> candidates;
      auto add = [&](const fs::path& p) {
        candidates.push_back(p);
        if (inc.extension() != ".ini") candidates.push_back(p.string() + ".ini");
      };
      if (inc.is_absolute()) {
        add(inc);
      } else {
        add(fs::path(base_dir.empty() ? "." : base_dir) / inc);
        if (!installed.empty()) add(fs::path(installed) / inc);
      }
      std::vector<std::string> looked;
      bool found = false;
      for (const fs::path& p : candidates) {
        looked.push_back(p.lexically_normal().string());
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        std::ifstream f(p);
        if (!f) continue;
        std::stringstream ss;
        ss << f.rdbuf();
        parse(ss.str(), p.string(), p.parent_path().string());
        found = true;
        break;
      }
      if (found) continue;
      const std::string key = embedded_platform_key(*it);
      if (!key.empty()) {
        // An embedded file's own includes resolve within the embedded set.
        embedded = &embedded_platform_files();
        parse(embedded->at(key), "platforms/" + key + " (embedded)", fs::path(key).parent_path().generic_string());
        embedded = nullptr;
        continue;
      }
      std::string list;
      for (const auto& l : looked) list += "'" + l + "', ";
      throw ConfigError(name + ": cannot open included file '" + *it + "'; looked in " + list +
                        "and the embedded platform set (platforms/" +
                        std::filesystem::path(*it).lexically_normal().generic_string() +
                        (inc.extension() == ".ini" ? "" : "[.ini]") + ")" +
                        (installed.empty() ? " (no installed platform directory: set KVTIER_PLATFORM_DIR)" : ""));
    }
    --depth;
  }
};

void validate(const PlatformConfig& c) {
  const std::string& src = c.source;
  const workload::ModelDescriptor& m = c.model_shape;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // Tensor parallelism: the platform is one GPU of the replica, holding 1/N of the weights and
  // of the KV heads, so N must divide the KV heads.
  const uint32_t tp = c.model.tensor_parallel;
  if (m.kv_heads % tp)
    throw ConfigError(src + ": key 'model.tensor_parallel' = " + std::to_string(tp) + " must divide the model's " +
                      std::to_string(m.kv_heads) + " KV heads");
  const double weights = m.weight_bytes(c.model.weight_dtype_bytes);
  const double need = weights / tp + (c.hbm.kv_budget_gib + c.hbm.activation_reserve_gib) * gib;
  if (need > c.hbm.capacity_gb * 1e9) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << src << ": model " << c.model.name << " weights " << weights / 1e9
       << " GB (model.weight_dtype_bytes = " << c.model.weight_dtype_bytes << ")";
    if (tp > 1) os << " / model.tensor_parallel " << tp << " = " << weights / tp / 1e9 << " GB per GPU";
    os << " + hbm.kv_budget_gib " << c.hbm.kv_budget_gib
       << " GiB + hbm.activation_reserve_gib " << c.hbm.activation_reserve_gib << " GiB = " << need / 1e9
       << " GB exceed hbm.capacity_gb = " << c.hbm.capacity_gb << " GB";
    throw ConfigError(os.str());
  }
  if (!c.ctrl.wave_file.empty() && c.ctrl.impl != DataPlaneImpl::Rtl)
    throw ConfigError(src + ": key 'ctrl.wave_file' = '" + c.ctrl.wave_file +
                      "' needs ctrl.impl = rtl: the waveform is the Verilated RTL engine's");
  if (c.ctrl.wave_end_cycle <= c.ctrl.wave_start_cycle)
    throw ConfigError(src + ": key 'ctrl.wave_end_cycle' = " + std::to_string(c.ctrl.wave_end_cycle) +
                      " must be greater than 'ctrl.wave_start_cycle' = " + std::to_string(c.ctrl.wave_start_cycle));
  if (c.ctrl.impl == DataPlaneImpl::Rtl) {
    const std::string why = cosim::rtl_config_mismatch(c.ctrl);
    if (!why.empty()) throw ConfigError(src + ": ctrl.impl = rtl: " + why);
  }
  if (c.ctrl.index_sets & (c.ctrl.index_sets - 1))
    throw ConfigError(src + ": key 'ctrl.index_sets' = " + std::to_string(c.ctrl.index_sets) + " must be a power of two");
  uint32_t set_bits = 0;
  while ((1u << set_bits) < c.ctrl.index_sets) ++set_bits;
  if (set_bits + c.ctrl.key_tag_bits > 64)
    throw ConfigError(src + ": log2(ctrl.index_sets) + ctrl.key_tag_bits = " + std::to_string(set_bits + c.ctrl.key_tag_bits) +
                      " exceeds the 64-bit block key");
  const uint32_t layers_per_block = c.host.layers_per_block ? c.host.layers_per_block : m.layers;
  if (m.layers % layers_per_block)
    throw ConfigError(src + ": key 'host.layers_per_block' = " + std::to_string(c.host.layers_per_block) +
                      " must divide the model's " + std::to_string(m.layers) + " layers");
  if (c.host.decode_residency == DecodeResidency::Streamed && m.layers / layers_per_block < 3)
    throw ConfigError(src + ": key 'host.decode_residency' = streamed needs at least 3 layer groups (double-buffered "
                      "staging streams group g while group g-1 computes), but host.layers_per_block = " +
                      std::to_string(c.host.layers_per_block) + " gives " + std::to_string(m.layers / layers_per_block) +
                      "; set host.layers_per_block to at most " + std::to_string(m.layers / 3));
  const double block_bytes = static_cast<double>(m.kv_bytes_per_token(c.model.kv_dtype_bytes) / tp) /
                             (m.layers / layers_per_block) * c.host.block_tokens;
  if (block_bytes > std::ldexp(1.0, static_cast<int>(c.ctrl.length_bits)) - 1 || block_bytes > kMaxU32)
    throw ConfigError(src + ": a block of " + std::to_string(static_cast<uint64_t>(block_bytes)) +
                      " bytes does not fit ctrl.length_bits = " + std::to_string(c.ctrl.length_bits) +
                      " (nor the descriptor's 32-bit length)");
  if (block_bytes > c.hbm.kv_budget_gib * gib)
    throw ConfigError(src + ": hbm.kv_budget_gib holds not even one block of " + std::to_string(static_cast<uint64_t>(block_bytes)) + " bytes");
  const double tier_blocks = c.tier.capacity_gib * gib / block_bytes;
  if (tier_blocks > std::ldexp(1.0, static_cast<int>(c.ctrl.tier_addr_bits)))
    throw ConfigError(src + ": the tier holds " + std::to_string(static_cast<uint64_t>(tier_blocks)) +
                      " blocks, more than ctrl.tier_addr_bits = " + std::to_string(c.ctrl.tier_addr_bits) + " can address");
  if (c.host.dma == HostDma::Host && (c.host.tier_format != TierFormat::Bf16 || c.host.recompress_format != Recompress::None))
    throw ConfigError(src + ": host.dma = host copies blocks as they are: it needs host.tier_format = bf16 and "
                      "host.recompress_format = none (compression runs on the device's engine)");
  try {
    kv::parse_qos_targets(c.sched.tenant_qos, {c.sched.ttft_target_s, c.sched.itl_target_s});
  } catch (const std::invalid_argument& e) {
    throw ConfigError(src + ": key 'sched.tenant_qos': " + e.what());
  }
  const double hbm_blocks = c.hbm.kv_budget_gib * gib / block_bytes;
  if (hbm_blocks > std::ldexp(1.0, static_cast<int>(c.ctrl.hbm_slot_bits)))
    throw ConfigError(src + ": the KV budget holds " + std::to_string(static_cast<uint64_t>(hbm_blocks)) +
                      " blocks, more than ctrl.hbm_slot_bits = " + std::to_string(c.ctrl.hbm_slot_bits) + " can address");
}

}  // namespace

namespace {

PlatformConfig load_from(const std::string& text, const std::string& name, const std::string& base_dir,
                         const std::vector<std::string>& overrides, const std::map<std::string, std::string>* embedded) {
  PlatformConfig config;
  config.source = name;
  KeyRegistry registry = declare_all(config);
  Loader loader{boost_schema(registry), {}, {}, 0};
  loader.embedded = embedded;
  // Overrides are stored first, so they win over every file; the last --set of a key wins.
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string& o = *it;
    const auto eq = o.find('=');
    if (eq == std::string::npos) throw ConfigError("--set '" + o + "': expected section.key=value");
    std::string key = o.substr(0, eq), value = o.substr(eq + 1);
    bool known = false;
    for (const Key& k : registry.keys()) known |= k.name == key;
    if (!known) throw ConfigError("--set: unknown key '" + key + "'");
    std::vector<po::option> opts(1);
    opts[0].string_key = key;
    opts[0].value = {value};
    po::parsed_options parsed(&loader.schema);
    parsed.options = opts;
    po::store(parsed, loader.vm);
    loader.where.emplace(key, "--set");
  }
  loader.parse(text, name, base_dir);
  for (const Key& k : registry.keys()) {
    if (!loader.vm.count(k.name)) continue;
    k.set(loader.vm[k.name].as<std::string>(), loader.where[k.name]);
  }
  config.model_shape = resolve_model(config.model, loader.vm.count("model.config") ? loader.where["model.config"] : name);
  validate(config);
  return config;
}

}  // namespace

workload::ModelDescriptor resolve_model(const ModelConfig& c, const std::string& where) {
  if (c.config.empty()) return workload::model_by_name(c.name);
  try {
    return workload::model_from_config_file(c.config);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(where + ": key 'model.config': " + e.what());
  }
}

PlatformConfig load_platform_text(const std::string& text, const std::string& name, const std::string& base_dir,
                                  const std::vector<std::string>& overrides) {
  return load_from(text, name, base_dir, overrides, nullptr);
}

PlatformConfig load_embedded_platform_text(const std::string& text, const std::string& name,
                                           const std::vector<std::string>& overrides) {
  return load_from(text, name, "", overrides, &embedded_platform_files());
}

std::string embedded_platform_key(const std::string& path) {
  std::filesystem::path p(path);
  if (p.empty() || p.is_absolute()) return "";
  std::string key = p.lexically_normal().generic_string();
  if (key.rfind("platforms/", 0) == 0) key = key.substr(10);
  if (std::filesystem::path(key).extension() != ".ini") key += ".ini";
  return embedded_platform_files().count(key) ? key : "";
}

PlatformConfig load_platform(const std::string& path, const std::vector<std::string>& overrides) {
  const auto& files = embedded_platform_files();
  if (path.empty()) {
    const std::string key = embedded_platform_key(kDefaultPlatformFile);
    return load_from(files.at(key), kDefaultPlatformName, std::filesystem::path(key).parent_path().generic_string(),
                     overrides, &files);
  }
  std::ifstream f(path);
  if (!f) {
    // Not on disk: a platform of the source tree by name (`h200-cxl3-x16`), from the embedded set.
    const std::string key = embedded_platform_key(path);
    if (key.empty()) throw ConfigError("cannot open platform file '" + path + "'");
    return load_from(files.at(key), "platforms/" + key + " (embedded)",
                     std::filesystem::path(key).parent_path().generic_string(), overrides, &files);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return load_platform_text(ss.str(), path, std::filesystem::path(path).parent_path().string(), overrides);
}

std::string describe(const PlatformConfig& config) {
  PlatformConfig copy = config;
  KeyRegistry registry = declare_all(copy);
  std::ostringstream os;
  os << "# effective configuration of " << config.source << " (after includes and --set)\n";
  std::string section;
  for (const Key& k : registry.keys()) {
    const std::string s = k.name.substr(0, k.name.find('.'));
    if (s != section) {
      os << (section.empty() ? "" : "\n") << "[" << s << "]\n";
      section = s;
    }
    os << k.name.substr(k.name.find('.') + 1) << " = " << k.get() << "    # " << k.description << "; " << k.range << "\n";
  }
  return os.str();
}

bool is_platform_key(const std::string& name) { return !platform_key_description(name).empty(); }

std::string platform_key_description(const std::string& name) {
  PlatformConfig defaults;
  KeyRegistry registry = declare_all(defaults);
  for (const Key& k : registry.keys())
    if (k.name == name) return k.description;
  return "";
}

std::string describe_keys() {
  PlatformConfig defaults;
  KeyRegistry registry = declare_all(defaults);
  std::ostringstream os;
  for (const Key& k : registry.keys())
    os << "  " << std::left << std::setw(34) << k.name << " " << std::setw(10) << k.get() << " " << k.description << " ("
       << k.range << ")\n";
  return os.str();
}

}  // namespace kvtier
