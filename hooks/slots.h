// hooks/slots: the RealSlot of every hook in bind_list.h and every function in
// call_list.h, with its type.
#pragma once

#include <type_traits>

#include "hooks/abi.h"
#include "hooks/hook.h"

#define PW_BIND(name, version, need) PW_DECLARE_REAL(name);
#include "hooks/bind_list.h"
#undef PW_BIND
#define PW_CALL(name) PW_DECLARE_REAL(name);
#include "hooks/call_list.h"
#undef PW_CALL
