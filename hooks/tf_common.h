// hooks/tf_common: what hooks/tf.cpp and hooks/tf_functions.cpp both ask of TensorFlow.
#pragma once

#include "hooks/abi.h"

namespace pw::hooks {

// TF_GetCode of a status, through the caller's TensorFlow (-1 without one).
int status_code(TF_Status* st, const void* pc);
// The process is governed and active: TensorFlow's hooks do their work.
bool tf_active();

}  // namespace pw::hooks
