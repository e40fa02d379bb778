// jemalloc's options for every executable linked with it (CMakeLists.txt, nbox_allocator),
// read by jemalloc at its first allocation; MALLOC_CONF in the environment still overrides them.
//
// dirty_decay_ms:0 returns the pages a run frees to the system at once instead of keeping them
// for 10 s (jemalloc's default). A run that builds and drops schedules collective after
// collective otherwise peaked at whatever it had ever touched, and its peak resident memory
// moved by 25% from run to run of the same scenario (DeepSeekMoE on 128 GPUs, flow model: 53 to
// 67 MB; 45 MB with the pages returned), beyond what the memory estimate counts (the live
// objects: tools/cosim/assembly/memory_estimate.h). The same runs took the same time within
// 0.5% (tools/bench/README.md, "Memory of a whole run").
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "dirty_decay_ms:0";
}
