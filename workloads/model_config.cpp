#include "workloads/model_config.h"

#include <string>
#include <vector>

#include "tlm/common/key_registry.h"
#include "workloads/model.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, ModelConfig& c) {
  std::vector<std::string> models = workload::known_models();
  r.choice("model.name", &c.name, models,
           "built-in served model (workloads/models/NAME.json); model.config replaces it");
  r.text("model.config", &c.config,
         "Hugging Face config.json of the served model (path, or workloads/models/NAME.json of the "
         "built-ins); "
         "empty: model.name");
  r.number("model.weight_dtype_bytes", &c.weight_dtype_bytes, 0.25, 4,
           "bytes per weight (1 = FP8, 2 = bf16)");
  r.number("model.kv_dtype_bytes", &c.kv_dtype_bytes, 1, 4, "bytes per KV element (2 = bf16)");
  r.number("model.tensor_parallel", &c.tensor_parallel, 1, 64,
           "GPUs per replica (tensor parallel, dividing the KV heads); the platform simulates one "
           "of them: W/N weights, KV/N per token");
}

}  // namespace kvtier
