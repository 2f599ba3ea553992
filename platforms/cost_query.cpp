#include "platforms/cost_query.h"

#include <iomanip>
#include <sstream>

#include "tlm/sched/decode_cost_model.h"

namespace kvtier {

CostRow cost_row(const PlatformConfig& c, uint64_t tokens, uint32_t tp, uint64_t context,
                 CostPhase phase, uint64_t prefill_chunk) {
  if (c.sched.cost_model != CostModel::Operators)
    throw ConfigError(c.source +
                      ": key 'sched.cost_model' = two_bandwidth has no operators to break down; "
                      "kvtier cost needs sched.cost_model = operators");
  const workload::ModelDescriptor& m = c.model_shape;
  if (tp == 0 || m.kv_heads % tp || m.heads % tp || m.intermediate % tp)
    throw ConfigError("--tp " + std::to_string(tp) + " must divide the model's " +
                      std::to_string(m.kv_heads) + " KV heads, " + std::to_string(m.heads) +
                      " heads and intermediate size " + std::to_string(m.intermediate));
  ModelConfig mc = c.model;
  mc.tensor_parallel = tp;
  const DecodeCostModel model(m, mc, c.hbm, c.sched, c.gpu);
  CostRow r;
  r.tp = tp;
  r.context = context;
  StepBatch& b = r.batch;
  if (phase == CostPhase::Decode) {
    b.decode_tokens = tokens;
    b.context_tokens = tokens * context;
    if (prefill_chunk > 0) {
      b.new_tokens = prefill_chunk;
      b.prefill_sequences = 1;
      b.attended_pairs = prefill_chunk * (prefill_chunk + 1) / 2;  // a fresh prompt's first chunk
    }
  } else {
    // One prompt of `tokens` after `context` cached tokens: token i attends to context + i + 1.
    b.new_tokens = tokens;
    b.prefill_sequences = tokens > 0 ? 1 : 0;
    b.attended_pairs = tokens * context + tokens * (tokens + 1) / 2;
  }
  r.tokens = b.tokens();
  // The KV the batch holds: every decode request's context and its new token; a prompt's
  // cached tokens and its own; a mixed step's chunk.
  const uint64_t kv_tokens =
      phase == CostPhase::Decode ? tokens * (context + 1) + prefill_chunk : context + tokens;
  r.weights_bytes = m.weight_bytes(c.model.weight_dtype_bytes) / tp;
  r.kv_bytes = static_cast<double>(kv_tokens) *
               static_cast<double>(m.kv_bytes_per_token(c.model.kv_dtype_bytes)) / tp;
  r.reserve_bytes = c.hbm.activation_reserve_gib * 1024.0 * 1024.0 * 1024.0;
  r.fits = r.hbm_need_bytes() <= c.hbm.capacity_gb * 1e9;
  r.cost = model.operators(b);
  r.step_s = model
                 .step(b.decode_tokens, b.context_tokens, b.new_tokens, b.attended_pairs,
                       b.prefill_sequences)
                 .total_s();
  return r;
}

std::vector<CostRow> cost_rows(const PlatformConfig& c, const CostQuery& q) {
  std::vector<CostRow> rows;
  for (uint32_t tp : q.tp)
    for (uint64_t t : q.tokens)
      rows.push_back(cost_row(c, t, tp, q.context, q.phase, q.prefill_chunk));
  return rows;
}

nlohmann::ordered_json cost_json(const PlatformConfig& c, const std::vector<CostRow>& rows) {
  nlohmann::ordered_json j;
  j["platform"] = c.source;
  j["model"] = c.model_shape.name;
  j["weight_dtype_bytes"] = c.model.weight_dtype_bytes;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CostRow& r : rows) {
    const LayerOps& o = r.cost.layer;
    nlohmann::ordered_json ops;
    for (const auto& [name, s] : r.cost.ops()) ops[name] = s;
    list.push_back({{"tokens", r.tokens},
                    {"decode_tokens", r.batch.decode_tokens},
                    {"prefill_tokens", r.batch.new_tokens},
                    {"tp", r.tp},
                    {"context", r.context},
                    {"linear_s", o.linear_s()},
                    {"attention_s", o.attention_s},
                    {"allreduce_s", o.allreduce_s},
                    {"other_s", o.other_s()},
                    {"layer_s", r.cost.layer_s()},
                    {"layers", r.cost.layers},
                    {"lm_head_s", r.cost.lm_head_s},
                    {"step_s", r.step_s},
                    {"fits", r.fits},
                    {"hbm_need_gb", r.hbm_need_bytes() / 1e9},
                    {"ops", ops}});
  }
  j["rows"] = list;
  return j;
}

std::string format_cost(const PlatformConfig& c, const std::vector<CostRow>& rows) {
  std::ostringstream os;
  os << "model " << c.model_shape.name << ", " << c.model_shape.layers << " layers, "
     << c.model.weight_dtype_bytes << " B per weight; platform " << c.source << "\n"
     << "per layer, us (lm_head and step: per step, ms; fits: weights / tp + the batch's KV / tp + "
     << "hbm.activation_reserve_gib within hbm.capacity_gb = " << c.hbm.capacity_gb << " GB)\n";
  const char* head[] = {"tokens",  "tp",     "context", "qkv",     "attn",    "o_proj",
                        "gate_up", "down",   "router",  "norms",   "adds",    "act",
                        "rotary",  "allred", "layer",   "lm_head", "step_ms", "fits"};
  for (const char* h : head) os << std::setw(9) << h;
  os << "\n" << std::fixed;
  for (const CostRow& r : rows) {
    const LayerOps& o = r.cost.layer;
    os << std::setw(9) << r.tokens << std::setw(9) << r.tp << std::setw(9) << r.context
       << std::setprecision(1);
    for (double s :
         {o.qkv_s, o.attention_s, o.out_proj_s, o.gate_up_s, o.down_s, o.router_s, o.norms_s,
          o.residual_s, o.activation_s, o.rotary_s, o.allreduce_s, r.cost.layer_s()})
      os << std::setw(9) << s * 1e6;
    os << std::setprecision(3) << std::setw(9) << r.cost.lm_head_s * 1e3 << std::setw(9)
       << r.step_s * 1e3 << std::setw(9) << (r.fits ? "yes" : "NO") << "\n";
  }
  // Why a row does not fit, once per width and batch.
  for (const CostRow& r : rows) {
    if (r.fits) continue;
    os << std::setprecision(1) << "  does not fit: tp " << r.tp << ", " << r.tokens
       << " tokens: weights " << r.weights_bytes / 1e9 << " GB + KV " << r.kv_bytes / 1e9
       << " GB + reserve " << r.reserve_bytes / 1e9 << " GB = " << r.hbm_need_bytes() / 1e9
       << " GB > " << c.hbm.capacity_gb << " GB\n";
  }
  return os.str();
}

}  // namespace kvtier
