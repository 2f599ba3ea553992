#pragma once
// Validated runtime configuration of every model, one struct per platform-file section.
// platforms/platform_config.cpp declares each key (name, default, range, description), parses
// the INI files and checks cross-field consistency; models take these structs as they are and
// never re-validate (schema, then validated object).
#include <cstdint>
#include <string>

namespace kvtier {

struct ModelConfig {
  std::string name = "llama-3-70b";
  double weight_dtype_bytes = 1.0;   // FP8 weights
  uint32_t kv_dtype_bytes = 2;       // bf16 KV
  // A replica spanning N GPUs (tensor parallel): weights and KV heads split evenly. The platform
  // simulates ONE GPU of the replica: W/N weights, KV/N bytes per token, its own HBM and link.
  uint32_t tensor_parallel = 1;
  // A Hugging Face config.json giving the shapes (workloads/model.h); empty: the built-in `name`.
  std::string config;
};

struct HbmConfig {
  double capacity_gb = 141.0;        // GB = 1e9 B
  double peak_bw_gbps = 4800.0;      // GB/s
  // Achievable bandwidth A = peak x achievable_fraction (STREAM-like). Every eta below is a
  // fraction of A, as Appendix L states its two measured bandwidths.
  double achievable_fraction = 1.0;
  double eta_weights = 0.87;         // effective fraction of A when streaming weights
  double eta_kv = 0.27;              // effective fraction of A when attention reads KV
  double eta_dma = 0.87;             // effective fraction of A for promotion writes / demotion reads
  double latency_ns = 500.0;         // access latency seen by a DMA burst
  double kv_budget_gib = 32.0;       // HBM reserved for KV blocks
  double activation_reserve_gib = 8.0;
};

struct LinkConfig {
  std::string protocol = "simple";   // simple | pcie5 | cxl2 | cxl3 | cxl3-lopt (docs/link.md)
  // pcie5 / cxl2 / cxl3 / cxl3-lopt: fast = bursts in closed form (same counts as reference with
  // no bit errors; replays sampled per burst); reference = unit by unit (docs/link.md).
  std::string flit_engine = "fast";
  uint32_t lanes = 16;               // flit-accurate protocols: 4, 8 or 16
  double gt_per_s = 32.0;            // per lane
  double encoding_efficiency = 128.0 / 130.0;  // 1.0 for 64 GT/s PAM4 flit mode (FEC is in the flit)
  double latency_ns = 75.0;          // simple: fixed pipeline latency per traversal, each direction
  uint32_t txn_overhead_bytes = 24;  // simple: wire bytes added to every transaction
  uint32_t max_payload_bytes = 256;  // simple: payload per transaction; pcie5 / CXL.io: max payload size (MPS)
  // Flit- and TLP-accurate protocols (pcie5, cxl2, cxl3, cxl3-lopt). A traversal costs
  // serialisation + host_port_ns + device_port_ns (+ fec_decode_ns with 256 B flits).
  double host_port_ns = 50.0;        // host-side port pipeline per traversal (root port / home agent)
  double device_port_ns = 30.0;      // device-side port pipeline per traversal
  double fec_decode_ns = 2.0;        // 256 B flits: FEC decode before a flit's contents are used
  uint32_t max_read_request_bytes = 512;         // PCIe MRRS: larger reads become several MRd
  uint32_t read_completion_boundary_bytes = 64;  // PCIe RCB
  bool completions_at_rcb = false;   // true: the completer splits every read at the RCB
  bool tlp_64bit_addresses = true;   // memory requests carry 4DW headers (16 B), else 3DW (12 B)
  bool ecrc = false;                 // 4 B end-to-end CRC per TLP
  uint32_t tlps_per_ack = 4;         // one ACK DLLP per this many TLPs received (assumption)
  uint32_t tlps_per_update_fc = 4;   // one UpdateFC DLLP per this many TLPs received (assumption)
  uint32_t credits_posted = 128;     // TLP header credits at the receiver: posted writes
  uint32_t credits_non_posted = 128; // ... read requests
  uint32_t credits_completion = 128; // ... completions
  uint32_t credits_m2s_req = 256;    // CXL.mem receiver credits per message class
  uint32_t credits_m2s_rwd = 256;
  uint32_t credits_s2m_drs = 256;
  uint32_t credits_s2m_ndr = 256;
  double credit_return_interval_ns = 20.0;  // a credit-only flit (LLCRD) waits this long for a protocol flit
  bool multi_data_header = true;     // CXL.mem MDH slots (H5/G6 68B) carry several DRS headers
  uint32_t max_owed_data_slots = 16; // a data header is packed only if at most this many data slots are owed
  double bit_error_rate = 0.0;       // per bit on the wire; corrupted flits/TLPs are replayed
  uint32_t error_seed = 1;           // seed of the bit-error generator (same seed, same errors)
  uint32_t retry_buffer_units = 256; // retry-buffer depth, flits (CXL) or TLPs (PCIe)
  double replay_latency_ns = 200.0;  // from a corrupted unit's last bit to the start of its replay
  // Raw rate of one direction after line encoding, bytes per second.
  double bytes_per_s() const { return lanes * gt_per_s * 1e9 / 8.0 * encoding_efficiency; }
};

struct TierConfig {
  double capacity_gib = 256.0;
  double bw_gbps = 76.8;
  double latency_ns = 110.0;
};

// The data plane behind the controller's sockets: the TLM reference model or the Verilated RTL
// engine (cosim/data_plane.h).
enum class DataPlaneImpl { Tlm, Rtl };
// Transfer scheduling among the commands of one doorbell (see CtrlConfig::transfer_order).
enum class TransferOrder { Fifo, Deadline };
// Index organisation (DESIGN.md §4; see CtrlConfig::index_org).
enum class IndexOrg { Full, Cached };
inline const char* name_of(DataPlaneImpl v) { return v == DataPlaneImpl::Rtl ? "rtl" : "tlm"; }
inline const char* name_of(TransferOrder v) { return v == TransferOrder::Deadline ? "deadline" : "fifo"; }
inline const char* name_of(IndexOrg v) { return v == IndexOrg::Cached ? "cached" : "full"; }

struct CtrlConfig {
  DataPlaneImpl impl = DataPlaneImpl::Tlm;
  double clock_mhz = 1000.0;
  uint32_t index_sets = 16384;
  uint32_t index_ways = 4;
  uint32_t index_read_cycles = 2;    // SRAM read latency of one lookup
  uint32_t key_tag_bits = 40;
  uint32_t tier_addr_bits = 26;      // in units of tier slots (block-aligned)
  uint32_t hbm_slot_bits = 16;
  uint32_t policy_bits = 16;         // policy state replicated on the device
  uint32_t mechanism_bits = 8;       // valid, hbm-resident, pinned, in-flight, format
  uint32_t tenant_bits = 16;
  uint32_t length_bits = 24;
  double sram_mib_per_mm2 = 31.8;
  uint32_t ring_entries = 1024;
  uint32_t intake_cycles = 4;        // descriptor decode per descriptor
  uint32_t dma_engines = 4;
  uint32_t max_burst_bytes = 65536;
  double dma_engine_gbps = 64.0;
  uint32_t completion_cycles = 2;
  // Transfer scheduling among the commands of one doorbell: fifo = ring order (what the RTL
  // engine does); deadline = earliest descriptor deadline first (0 = no deadline, last), ties by
  // priority then ring order. With equal deadlines both orders give the same result.
  TransferOrder transfer_order = TransferOrder::Fifo;
  // Index organisation (DESIGN.md §4): full = every tier-resident block has an SRAM entry;
  // cached = the SRAM caches `index_cache_entries` entries of a table kept in tier DRAM, and a
  // lookup that misses reads `index_entry_bytes` from tier DRAM on the command's path, which
  // takes `index_dram_read_ns` (misses of one batch overlap: the table has its own DRAM bank
  // group, so payload bursts queued on the tier DRAM timeline do not delay it).
  IndexOrg index_org = IndexOrg::Full;
  uint32_t index_cache_entries = 4096;
  uint32_t index_entry_bytes = 64;
  double index_dram_read_ns = 110.0;
  // Compression engine: (de)quantises fp8 / int4 tier copies on the transfer path. 0 GB/s = not
  // modelled (zero time), which keeps bf16-only and co-simulated runs unchanged.
  double compress_gbps = 0.0;        // uncompressed bytes per second through the engine
  double compress_latency_ns = 0.0;  // pipeline latency per burst
  double fp8_bytes_ratio = 0.5;      // stored bytes / bf16 bytes of an fp8 tier copy
  double int4_bytes_ratio = 0.25;    // ... of an int4 tier copy (scales included)
  // kvtier cosim: largest |RTL - TLM| difference of a descriptor's lookup latency and
  // completion time, and of the median issue latency, in cycles (docs/cosim.md).
  double cosim_timing_tolerance_cycles = 8192;
  // ctrl.impl = rtl: FST waveform of the Verilated engine into this file (empty = none), dumped
  // only while the engine's cycle is in [wave_start_cycle, wave_end_cycle), so a long run can
  // keep a small file of the stretch of interest (docs/cosim.md, "Waves").
  std::string wave_file;
  uint64_t wave_start_cycle = 0;
  uint64_t wave_end_cycle = kWaveWholeRun;
  // Default end of the window: the largest value the key takes, beyond any run's last cycle
  // (31 years at 1 GHz); a double holds it exactly, so the key's text form reads back.
  static constexpr uint64_t kWaveWholeRun = 1'000'000'000'000'000'000ull;
};

// Where a running request's KV lives (docs/model.md, "Decode residency"). pinned: every block of
// the decode set stays in HBM; a request that needs a block when none is free preempts another.
// streamed: blocks of the decode set may live in the tier; each step streams them back, layer
// group by layer group, into staging slots (needs at least three layer groups).
enum class DecodeResidency { Pinned, Streamed };
// Representation of a tier copy (spec §M.1, Appendix L §L.5.1), and who moves the bytes.
enum class TierFormat { Bf16, Fp8, Int4 };
enum class Recompress { None, Fp8, Int4 };
enum class HostDma { Device, Host };
// How the control plane learns that a conversation is over (host.free_dead_blocks): after a
// stretch of inactivity (what a server can know), or from the workload's last-turn flag (an
// oracle, kept for comparison).
enum class SessionEnd { Idle, LastTurn };
inline const char* name_of(SessionEnd v) { return v == SessionEnd::LastTurn ? "last_turn" : "idle"; }

struct HostConfig {
  std::string policy = "lru";
  uint32_t block_tokens = 16;
  uint32_t layers_per_block = 0;     // 0 = all layers in one block
  uint32_t prefetch_horizon_steps = 0;
  double descriptor_cpu_ns = 250.0;  // host CPU time to build and post one descriptor
  bool free_dead_blocks = true;      // FREE a session's private blocks once the session has ended
  SessionEnd session_end = SessionEnd::LastTurn;
  double session_idle_s = 300.0;     // session_end = idle: inactivity after which a session has ended
  // Replacement policy parameters (docs/policies.md).
  bool persistent_policy = false;    // policy state survives eviction and re-admission (claim C4)
  double ema_alpha = 0.01;           // ema: weight of the newest reference
  std::string ema_clock = "second";  // ema: decay per "second" or per "reference"
  double admission_horizon_s = 30.0; // admission: horizon H
  double admission_lambda_s = 60.0;  // admission: residency seconds one avoided move is worth
  std::string tenant_qos;            // priority, admission: QoS class per tenant, "q0,q1,..."
  // Representation of tier copies (spec §M.1, Appendix L §L.5.1): format of new tier copies, and
  // the RECOMPRESS policy: a block whose tier copy is wider than `recompress_format` has that
  // copy rewritten narrower when it is evicted again (breaks write-once for exactly that block).
  TierFormat tier_format = TierFormat::Bf16;
  Recompress recompress_format = Recompress::None;
  double fp8_bytes_ratio = 0.5;             // copied from [ctrl] by the platform (the engine's formats)
  double int4_bytes_ratio = 0.25;
  // Who moves the bytes: device = the data plane's DMA engines from descriptors; host = the host
  // issues every copy itself (a driver call per copy, copy time from the host copy model, and a
  // completion round trip before the copy is known to be done).
  HostDma dma = HostDma::Device;
  double copy_issue_cpu_ns = 3000.0;        // host: CPU time of one copy call (driver)
  double copy_completion_rtt_us = 5.0;      // host: copy done -> host knows (event poll round trip)
  double doorbell_cpu_ns = 100.0;           // device: CPU time of one doorbell write (accounted, C3)
  double completion_cpu_ns = 200.0;         // CPU time to handle one completion (accounted, C3)
  double sustain_window_s = 1.0;            // SUSTAINABILITY: length of one demand window
  DecodeResidency decode_residency = DecodeResidency::Pinned;
  // Prefetch of a session's next turn, predicted online from the inter-turn gaps seen so far in
  // the run (never from the workload's own future arrivals). Needs prefetch_horizon_steps > 0.
  bool prefetch_next_turn = true;
};

// What happens to a running request's KV when it is preempted (vLLM's two modes).
enum class Preemption { Swap, Recompute };
// How a request whose KV is still arriving from the tier joins the batch.
//   async: it waits outside the batch until its load is done; the wait shows in its own TTFT.
//   layerwise: it joins at once; layer group g of the step waits only for the group's blocks.
//   blocking: it joins at once; the whole step waits before its first layer for every block.
enum class KvLoad { Async, Layerwise, Blocking };

// How the scheduler times a step (tlm/sched/decode_cost_model.h): per operator (GEMM shapes,
// attention, all-reduce, norms, LM head; docs/model.md), or the two-bandwidth decode formula of
// spec Appendix L with compute-bound prefill.
enum class CostModel { Operators, TwoBandwidth };

// The GPU's operator efficiencies (tlm/sched/operator_cost_model.h). A linear operator (GEMM of
// `tokens` rows) costs max(bytes / (A eta_mem), FLOPs / (peak eta_flop)) with
//   eta_mem(shape)  = linear_eta_mem x bytes / (bytes + A linear_eta_mem linear_launch_us)
//   eta_flop(shape) = linear_eta_flop x M N / (M N + linear_half_outputs)   (M tokens x N outputs)
// fitted to measured operator profiles (docs/model.md).
struct GpuConfig {
  double tflops_bf16 = 989.0;            // dense bf16 tensor-core peak, TFLOP/s
  double tflops_fp8 = 1979.0;            // dense FP8 peak (weights of 1 byte or less run at it)
  double linear_eta_mem = 1.0;           // weight streaming of a large GEMM, fraction of A
  double linear_launch_us = 5.0;         // fixed cost of one GEMM, us (launch, tail of the last wave)
  double linear_eta_flop = 0.7;          // compute efficiency of a large GEMM, fraction of peak
  double linear_half_outputs = 7e5;      // GEMM output elements (M x N) at which it is half of that:
                                         // a small output fills few tiles, leaving SMs idle
  double elementwise_eta = 0.5;          // norms, residual adds, activation, rotary: fraction of A
  double elementwise_launch_us = 5.0;    // fixed cost of one such kernel, us
  double attention_eta_flop = 0.5;       // prefill attention FLOPs, fraction of the bf16 peak
  // One all-reduce of S bytes over N GPUs: latency_N + S / bw_N (N = 2, 4, 8 measured; a replica
  // of 3 uses 4's, above 8 uses 8's: one node's NVLink domain).
  double allreduce_latency_us_2 = 10.0, allreduce_latency_us_4 = 15.0, allreduce_latency_us_8 = 20.0;
  double allreduce_gbps_2 = 300.0, allreduce_gbps_4 = 300.0, allreduce_gbps_8 = 300.0;
};

struct SchedConfig {
  uint32_t max_decode_set = 64;
  uint32_t max_prefill_tokens = 8192;   // prompt tokens per step (a cap within max_batched_tokens)
  uint32_t max_batched_tokens = 8192;   // tokens per step: decode tokens first, then prefill chunks
  Preemption preemption = Preemption::Swap;
  KvLoad kv_load = KvLoad::Async;
  // Streamed residency: the share of B_tier that streaming decode-set KV may take per step before
  // the scheduler preempts instead of spilling one more position to the tier.
  double stream_share = 0.25;
  double layer_overhead_us = 20.0;      // launch and sync overhead per layer per step
  double prefill_tflops = 1979.0;
  double prefill_utilization = 0.5;
  double quantum_us = 1000.0;           // quantum keeper's global quantum
  CostModel cost_model = CostModel::Operators;  // layer_overhead_us and prefill_*: two_bandwidth only
  // QoS targets (spec §M.4.3): every tenant gets ttft_target_s / itl_target_s unless
  // tenant_qos names it: "TENANT:TTFT_S:ITL_S[,...]". A tenant attains its QoS when at least
  // qos_goal of its requests meet the TTFT target and of its tokens meet the ITL target.
  double ttft_target_s = 2.0;
  double itl_target_s = 0.1;
  std::string tenant_qos;
  double qos_goal = 0.99;
};

}  // namespace kvtier
