#pragma once
// Validated runtime configuration of every model, one struct per platform-file section. Each
// section's struct, key declaration (name, default, range, description) and its own checks live
// beside the component that reads it; this header gathers them for code that needs several.
// platforms/platform_config.cpp parses the INI files through the declared keys and checks the
// consistency between sections; models take these structs as they are and never re-validate
// (schema, then validated object).
#include "tlm/ctrl/ctrl_config.h"
#include "tlm/host/host_config.h"
#include "tlm/link/link_config.h"
#include "tlm/mem/hbm_config.h"
#include "tlm/mem/tier_config.h"
#include "tlm/sched/gpu_config.h"
#include "tlm/sched/sched_config.h"
#include "workloads/model_config.h"
