// hooks/call_list: the host's functions that hooks call without interposing
// them, in one flat list beside bind_list.h. PW_CALL(name): its prototype is
// in hooks/abi.h; PW_REAL_AT(name, pc) reaches it as the calling object would.
// Bound on first use, not at load: most processes never call them, and a
// name no global object defines would cost every start a failed dlsym.
PW_CALL(omp_get_level)
PW_CALL(kmp_set_defaults)
PW_CALL(kmp_get_affinity_max_proc)
PW_CALL(kmp_set_blocktime)
PW_CALL(MKL_Set_Num_Threads_Local)
PW_CALL(TF_NewBuffer)
PW_CALL(TF_DeleteBuffer)
PW_CALL(TF_NewStatus)
PW_CALL(TF_DeleteStatus)
PW_CALL(TF_GetCode)
PW_CALL(TF_GraphToGraphDef)
PW_CALL(TF_FunctionToFunctionDef)
PW_CALL(pwe_session_options_get_inter_op_threads)
PW_CALL(pwe_session_options_get_intra_op_threads)
PW_CALL(pwe_session_options_set_inter_op_threads)
PW_CALL(pwe_session_options_set_intra_op_threads)
PW_CALL(pwe_session_options_get_batch)
PW_CALL(pwe_session_options_get_image_size)
PW_CALL(TF_OperationOutputType)
PW_CALL(TF_GetHandleShapeAndType)
