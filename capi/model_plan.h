// The plan settings a model handle and a context's options stand for:
// shared by edgellm_model_load, edgellm_model_plan and
// edgellm_context_create, so the plan a model reports is the one a context
// allocates.
#pragma once
#include "capi/handles.h"

namespace edgellm::capi {

// A context with default options on this model.
PlanSettings default_plan_settings(const edgellm_model& h);
// The options checked (each out-of-range field refused with its name) and
// turned into settings; null options: the defaults.
PlanSettings context_plan_settings(const edgellm_model& h, const edgellm_context_options* options);
// The same fields as a context policy.
ContextPolicy context_policy(const edgellm_context_options& o);
// The plan for s, with settings the model cannot run refused as
// EDGELLM_ERR_INVALID_ARGUMENT.
MemoryPlan plan_or_refuse(const Model& m, const PlanSettings& s);
// Where EDGELLM_LOAD_AUTO puts the weights, as the CLI decides it: a
// huge-page copy for large models, unless a memory limit leaves no room for
// it (the plan with the copy must stay within 3/4 of the limit).
gguf::Residency choose_residency(const Model& probe, PlanSettings s, uint64_t limit);

}  // namespace edgellm::capi
