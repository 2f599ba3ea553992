#pragma once
// `kvtier cost`: the operator cost model's time of one step, per operator and layer, for given
// batch sizes and tensor-parallel widths. The rows come from DecodeCostModel, the object the
// scheduler times its steps with, so the command shows what a simulation uses.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "platforms/platform_config.h"
#include "tlm/sched/operator_cost_model.h"

namespace kvtier {

enum class CostPhase { Decode, Prefill };

struct CostQuery {
  std::vector<uint64_t> tokens;  // decode: requests in the decode set; prefill: prompt tokens
  std::vector<uint32_t> tp;      // tensor-parallel widths (model.tensor_parallel)
  uint64_t context =
      0;  // decode: tokens of KV each request attends to; prefill: cached tokens before the prompt
  CostPhase phase = CostPhase::Decode;
  uint64_t prefill_chunk =
      0;  // decode only: one prefill chunk of this many tokens joins the batch (mixed)
};

struct CostRow {
  uint64_t tokens = 0;  // rows through every linear operator (decode + prefill tokens)
  uint32_t tp = 1;
  uint64_t context = 0;
  StepBatch batch;
  StepCost cost;
  double step_s = 0;  // DecodeCostModel::step(...).total_s(): the scheduler's step time
  // Whether the batch fits one GPU's HBM at this width: weights / tp + the batch's KV / tp +
  // hbm.activation_reserve_gib against hbm.capacity_gb (bytes).
  double weights_bytes = 0, kv_bytes = 0, reserve_bytes = 0;
  bool fits = true;
  double hbm_need_bytes() const { return weights_bytes + kv_bytes + reserve_bytes; }
};

// One row per (tp, tokens), each marked whether it fits the GPU's HBM. Throws ConfigError when a
// width does not divide the model's heads, or when the platform does not use the operator model.
std::vector<CostRow> cost_rows(const PlatformConfig& platform, const CostQuery& query);
// One row, for calibration: `tokens` rows through the layer on `tp` GPUs, no KV read.
CostRow cost_row(const PlatformConfig& platform, uint64_t tokens, uint32_t tp, uint64_t context = 0,
                 CostPhase phase = CostPhase::Decode, uint64_t prefill_chunk = 0);

// {"model", "platform", "rows": [{"tokens", "tp", "context", "linear_s", "attention_s",
// "allreduce_s",
//  "other_s", "layer_s", "lm_head_s", "step_s", "ops": {...}}]}
nlohmann::ordered_json cost_json(const PlatformConfig& platform, const std::vector<CostRow>& rows);
std::string format_cost(const PlatformConfig& platform, const std::vector<CostRow>& rows);

}  // namespace kvtier
