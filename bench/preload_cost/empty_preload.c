/* bench/preload_cost/empty_preload.c: the baseline preload, a shared object
   with nothing in it: what any LD_PRELOAD costs the dynamic loader. */
int pw_bench_empty_preload_marker;
