#include "platforms/key_modes.h"

#include <functional>

#include "tlm/common/text.h"

namespace kvtier {
namespace {

struct KeyMode {
  std::vector<std::string> keys;
  std::string read_when;  // "read only when ..."
  // Whether `c` reads the keys (the workload spec is the one the run simulates).
  std::function<bool(const PlatformConfig& c, const std::string& spec)> reads;
  // What the run has instead, for the warning ("sched.cost_model = operators").
  std::function<std::string(const PlatformConfig& c, const std::string& spec)> here;
};

bool synthetic(const std::string& spec) { return spec.rfind("synthetic", 0) == 0; }
bool flit_or_tlp(const LinkConfig& l) { return l.protocol != LinkProtocolKind::Simple; }
bool uses(const HostConfig& h, TierFormat f, Recompress r) {
  return h.tier_format == f || h.recompress_format == r;
}

std::string protocol_here(const PlatformConfig& c, const std::string&) {
  return std::string("link.protocol = ") + name_of(c.link.protocol);
}

const std::vector<KeyMode>& modes() {
  static const std::vector<KeyMode> table = {
      // tlm/sched/decode_cost_model.cpp: the two-bandwidth model reads these, the operator model
      // (operator_cost_model.cpp) reads the gpu.* operator figures instead.
      {{"sched.layer_overhead_us", "sched.prefill_tflops", "sched.prefill_utilization",
        "hbm.eta_weights"},
       "sched.cost_model = two_bandwidth",
       [](const PlatformConfig& c, const std::string&) {
         return c.sched.cost_model == CostModel::TwoBandwidth;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("sched.cost_model = operators");
       }},
      {{"gpu.tflops_bf16", "gpu.tflops_fp8", "gpu.linear_eta_mem", "gpu.linear_launch_us",
        "gpu.linear_eta_flop", "gpu.linear_half_outputs", "gpu.elementwise_eta",
        "gpu.elementwise_launch_us", "gpu.attention_eta_flop"},
       "sched.cost_model = operators",
       [](const PlatformConfig& c, const std::string&) {
         return c.sched.cost_model == CostModel::Operators;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("sched.cost_model = two_bandwidth");
       }},
      // platforms/cluster_router.cpp: only the prefix-aware router reads its load cap.
      {{"cluster.load_cap"},
       "cluster.router = prefix_affinity",
       [](const PlatformConfig& c, const std::string&) {
         return c.cluster.router == ClusterRouter::PrefixAffinity;
       },
       [](const PlatformConfig& c, const std::string&) {
         return std::string("cluster.router = ") + name_of(c.cluster.router);
       }},
      // tlm/sched/scheduler.cpp (stream share, oversized prompts), control_plane.cpp (restore).
      {{"sched.stream_share", "sched.oversized_prompt", "host.restore_streamed"},
       "host.decode_residency = streamed",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.decode_residency == DecodeResidency::Streamed;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("host.decode_residency = pinned");
       }},
      // tlm/host/policy/policy.cpp: each policy's own parameters.
      {{"host.ema_alpha", "host.ema_clock"},
       "host.policy = ema",
       [](const PlatformConfig& c, const std::string&) { return c.host.policy == "ema"; },
       [](const PlatformConfig& c, const std::string&) {
         return "host.policy = " + c.host.policy;
       }},
      {{"host.admission_horizon_s", "host.admission_lambda_s"},
       "host.policy = admission",
       [](const PlatformConfig& c, const std::string&) { return c.host.policy == "admission"; },
       [](const PlatformConfig& c, const std::string&) {
         return "host.policy = " + c.host.policy;
       }},
      {{"host.tenant_qos"},
       "host.policy = priority or admission",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.policy == "priority" || c.host.policy == "admission";
       },
       [](const PlatformConfig& c, const std::string&) {
         return "host.policy = " + c.host.policy;
       }},
      // tlm/host/session_expiry.h, reached from control_plane.cpp only for idle ends of sessions
      // whose blocks are freed.
      {{"host.session_idle_s"},
       "host.session_end = idle and host.free_dead_blocks = true",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.session_end == SessionEnd::Idle && c.host.free_dead_blocks;
       },
       [](const PlatformConfig& c, const std::string&) {
         return c.host.free_dead_blocks ? std::string("host.session_end = last_turn")
                                        : std::string("host.free_dead_blocks = false");
       }},
      // tlm/host/prefetcher.h: next-turn prediction is part of prefetch.
      {{"host.prefetch_next_turn"},
       "host.prefetch_horizon_steps > 0",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.prefetch_horizon_steps > 0;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("host.prefetch_horizon_steps = 0");
       }},
      // tlm/host/command_path.cpp: the descriptor ring's costs, or the host's own copies'.
      {{"host.descriptor_cpu_ns", "host.doorbell_cpu_ns"},
       "host.dma = device",
       [](const PlatformConfig& c, const std::string&) { return c.host.dma == HostDma::Device; },
       [](const PlatformConfig&, const std::string&) { return std::string("host.dma = host"); }},
      // tlm/host/control_plane.cpp: policy words live in the device's index; the host's own
      // copies keep none.
      {{"host.policy_sync"},
       "host.dma = device",
       [](const PlatformConfig& c, const std::string&) { return c.host.dma == HostDma::Device; },
       [](const PlatformConfig&, const std::string&) { return std::string("host.dma = host"); }},
      // tlm/host/host_queues.h: what noticing a completion costs, by host.completion.
      {{"host.interrupt_cpu_ns"},
       "host.completion = interrupt",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.completion == CompletionNotice::Interrupt;
       },
       [](const PlatformConfig& c, const std::string&) {
         return std::string("host.completion = ") + name_of(c.host.completion);
       }},
      {{"host.poll_cpu_ns"},
       "host.completion = poll",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.completion == CompletionNotice::Poll;
       },
       [](const PlatformConfig& c, const std::string&) {
         return std::string("host.completion = ") + name_of(c.host.completion);
       }},
      // tlm/link/link.cpp: only a device's DMA passes the root complex limit.
      {{"link.root_complex_dma_gbps"},
       "host.dma = device",
       [](const PlatformConfig& c, const std::string&) { return c.host.dma == HostDma::Device; },
       [](const PlatformConfig&, const std::string&) { return std::string("host.dma = host"); }},
      {{"host.copy_issue_cpu_ns", "host.copy_completion_rtt_us", "host_copy.bandwidth_gbps",
        "host_copy.call_overhead_us", "host_copy.batched_call_overhead_us"},
       "host.dma = host",
       [](const PlatformConfig& c, const std::string&) { return c.host.dma == HostDma::Host; },
       [](const PlatformConfig&, const std::string&) { return std::string("host.dma = device"); }},
      // tlm/link/simple_protocol.cpp, and the TLP / flit protocols (pcie5_protocol.cpp,
      // cxl_flit_protocol.cpp, their engines *_flit_engine.cpp, pcie_tlp.cpp, link_wire.cpp).
      {{"link.latency_ns", "link.txn_overhead_bytes"},
       "link.protocol = simple",
       [](const PlatformConfig& c, const std::string&) {
         return c.link.protocol == LinkProtocolKind::Simple;
       },
       protocol_here},
      {{"link.flit_engine", "link.host_port_ns", "link.device_port_ns",
        "link.max_read_request_bytes", "link.completions_at_rcb", "link.tlp_64bit_addresses",
        "link.ecrc", "link.credits_posted", "link.credits_non_posted", "link.credits_completion",
        "link.bit_error_rate", "link.retry_buffer_units"},
       "link.protocol = pcie5, cxl2, cxl3 or cxl3-lopt",
       [](const PlatformConfig& c, const std::string&) { return flit_or_tlp(c.link); },
       protocol_here},
      {{"link.fec_decode_ns"},
       "link.protocol = cxl3 or cxl3-lopt (256 B flits with FEC)",
       [](const PlatformConfig& c, const std::string&) {
         return c.link.protocol == LinkProtocolKind::Cxl3 ||
                c.link.protocol == LinkProtocolKind::Cxl3Lopt;
       },
       protocol_here},
      {{"link.tlps_per_ack", "link.tlps_per_update_fc"},
       "link.protocol = pcie5 or cxl2 (framed TLPs with DLLPs)",
       [](const PlatformConfig& c, const std::string&) {
         return c.link.protocol == LinkProtocolKind::Pcie5 ||
                c.link.protocol == LinkProtocolKind::Cxl2;
       },
       protocol_here},
      {{"link.read_completion_boundary_bytes"},
       "link.completions_at_rcb = true (with a TLP or flit protocol)",
       [](const PlatformConfig& c, const std::string&) {
         return flit_or_tlp(c.link) && c.link.completions_at_rcb;
       },
       [](const PlatformConfig& c, const std::string& s) {
         return flit_or_tlp(c.link) ? std::string("link.completions_at_rcb = false")
                                    : protocol_here(c, s);
       }},
      {{"link.error_seed", "link.replay_latency_ns"},
       "link.bit_error_rate > 0 (with a TLP or flit protocol)",
       [](const PlatformConfig& c, const std::string&) {
         return flit_or_tlp(c.link) && c.link.bit_error_rate > 0;
       },
       [](const PlatformConfig& c, const std::string& s) {
         return flit_or_tlp(c.link) ? std::string("link.bit_error_rate = 0") : protocol_here(c, s);
       }},
      // cxl_flit_protocol.cpp send_mem / cxl_mem_packer.cpp: only CXL.mem messages, which only
      // link-study and calibrate make (a run's traffic is CXL.io: descriptors, DMA, completions).
      {{"link.credits_m2s_req", "link.credits_m2s_rwd", "link.credits_s2m_drs",
        "link.credits_s2m_ndr", "link.credit_return_interval_ns", "link.multi_data_header",
        "link.max_owed_data_slots", "link.root_complex_load_gbps", "link.root_complex_store_gbps"},
       "CXL.mem traffic: kvtier link-study and calibrate (a run moves KV over CXL.io)",
       [](const PlatformConfig&, const std::string&) { return false; },
       [](const PlatformConfig&, const std::string&) {
         return std::string("kvtier run sends no CXL.mem message");
       }},
      // tlm/ctrl/controller.cpp: the SRAM cache of the cached and host index organisations,
      // and where each keeps its table.
      {{"ctrl.index_cache_entries", "ctrl.index_entry_bytes"},
       "ctrl.index_org = cached or host",
       [](const PlatformConfig& c, const std::string&) {
         return c.ctrl.index_org != IndexOrg::Full;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("ctrl.index_org = full");
       }},
      {{"ctrl.index_dram_read_ns"},
       "ctrl.index_org = cached",
       [](const PlatformConfig& c, const std::string&) {
         return c.ctrl.index_org == IndexOrg::Cached;
       },
       [](const PlatformConfig& c, const std::string&) {
         return std::string("ctrl.index_org = ") + name_of(c.ctrl.index_org);
       }},
      {{"ctrl.index_host_dram_ns"},
       "ctrl.index_org = host",
       [](const PlatformConfig& c, const std::string&) {
         return c.ctrl.index_org == IndexOrg::Host;
       },
       [](const PlatformConfig& c, const std::string&) {
         return std::string("ctrl.index_org = ") + name_of(c.ctrl.index_org);
       }},
      // controller.cpp: compression only for fp8 / int4 copies (tier format or recompression).
      {{"ctrl.compress_gbps"},
       "host.tier_format or host.recompress_format is fp8 or int4",
       [](const PlatformConfig& c, const std::string&) {
         return c.host.tier_format != TierFormat::Bf16 ||
                c.host.recompress_format != Recompress::None;
       },
       [](const PlatformConfig&, const std::string&) {
         return std::string("host.tier_format = bf16, host.recompress_format = none");
       }},
      {{"ctrl.compress_latency_ns"},
       "ctrl.compress_gbps > 0 and an fp8 or int4 tier format or recompression",
       [](const PlatformConfig& c, const std::string&) {
         return c.ctrl.compress_gbps > 0 && (c.host.tier_format != TierFormat::Bf16 ||
                                             c.host.recompress_format != Recompress::None);
       },
       [](const PlatformConfig& c, const std::string&) {
         return c.ctrl.compress_gbps > 0
                    ? std::string("host.tier_format = bf16, host.recompress_format = none")
                    : std::string("ctrl.compress_gbps = 0");
       }},
      // tier_store.cpp stored_bytes / controller.cpp bytes_ratio.
      {{"ctrl.fp8_bytes_ratio"},
       "host.tier_format = fp8 or host.recompress_format = fp8",
       [](const PlatformConfig& c, const std::string&) {
         return uses(c.host, TierFormat::Fp8, Recompress::Fp8);
       },
       [](const PlatformConfig&, const std::string&) { return std::string("no fp8 tier copy"); }},
      {{"ctrl.int4_bytes_ratio"},
       "host.tier_format = int4 or host.recompress_format = int4",
       [](const PlatformConfig& c, const std::string&) {
         return uses(c.host, TierFormat::Int4, Recompress::Int4);
       },
       [](const PlatformConfig&, const std::string&) { return std::string("no int4 tier copy"); }},
      // cosim/scoreboard.cpp: the co-simulation bench's timing tolerance.
      {{"ctrl.cosim_timing_tolerance_cycles"},
       "kvtier cosim (the scoreboard's timing tolerance)",
       [](const PlatformConfig&, const std::string&) { return false; },
       [](const PlatformConfig&, const std::string&) {
         return std::string("kvtier run has no scoreboard");
       }},
      // platform_config.cpp resolve_model: a config.json wins over the built-in name.
      {{"model.name"},
       "model.config is empty",
       [](const PlatformConfig& c, const std::string&) { return c.model.config.empty(); },
       [](const PlatformConfig& c, const std::string&) {
         return "model.config = " + c.model.config;
       }},
      // workloads/synthetic.cpp: the generator's parameters.
      {{"workload.sessions", "workload.tenants", "workload.session_rate_per_s",
        "workload.turns_mean", "workload.think_time_mean_s", "workload.system_prompt_tokens",
        "workload.user_tokens_mean", "workload.output_tokens_mean", "workload.max_context_tokens",
        "workload.nominal_itl_s", "workload.document_share", "workload.document_tokens",
        "workload.arrival_cv", "workload.arrival_distribution", "workload.think_time_cv",
        "workload.think_distribution", "workload.system_prompt_scope"},
       "the workload is synthetic:",
       [](const PlatformConfig&, const std::string& spec) { return synthetic(spec); },
       [](const PlatformConfig&, const std::string& spec) {
         return "the workload is " + spec.substr(0, spec.find(':')) + ":";
       }},
  };
  return table;
}

const KeyMode* mode_of(const std::string& key) {
  for (const KeyMode& m : modes())
    for (const std::string& k : m.keys)
      if (k == key) return &m;
  return nullptr;
}

}  // namespace

std::string key_read_when(const std::string& key) {
  const KeyMode* m = mode_of(key);
  return m ? m->read_when : "";
}

std::vector<std::string> keys_with_modes() {
  std::vector<std::string> keys;
  for (const KeyMode& m : modes()) keys.insert(keys.end(), m.keys.begin(), m.keys.end());
  return keys;
}

std::vector<std::string> keys_of_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> keys;
  for (const std::string& o : overrides) {
    const std::string key = trim_spaces(o.substr(0, o.find('=')));
    bool seen = false;
    for (const std::string& k : keys) seen |= k == key;
    if (!seen) keys.push_back(key);
  }
  return keys;
}

std::vector<std::string> unread_key_warnings(const PlatformConfig& config,
                                             const std::string& workload_spec,
                                             const std::vector<std::string>& set_keys) {
  std::vector<std::string> out;
  for (const std::string& key : set_keys) {
    const KeyMode* m = mode_of(key);
    if (!m || m->reads(config, workload_spec)) continue;
    out.push_back(key + " is not read: it is read only when " + m->read_when + "; here " +
                  m->here(config, workload_spec));
  }
  return out;
}

}  // namespace kvtier
