// The labs' timing (tools/lab/*.cu), the two ways fq bench and the labs measure a call:
//   time_graph_us   `iters` calls captured in one CUDA graph, replayed `reps` times: the median per call
//                   (fq bench's method: no host launch overhead between calls)
//   time_stream_us  12 calls launched on the default stream `reps` times, after a warm-up: the median per
//                   call (enough for kernels of tens of microseconds and more)
// Each call's data comes from the caller's rotated buffer sets (call i uses set i % sets), so that no call
// finds its data in L2.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                                         \
    do {                                                                                              \
        const cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                      \
            std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));            \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

// The median of `reps` per-call times: each rep runs `calls` calls between two events on stream s.
inline double median_per_call_us(cudaStream_t s, int reps, int calls, const std::function<void()>& rep) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a, s));
        rep();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(double(ms) * 1e3 / calls);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <class Enqueue>
double time_graph_us(cudaStream_t s, int iters, Enqueue&& enqueue, int reps = 7) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i) enqueue(i);
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, s));  // warm-up
    CK(cudaStreamSynchronize(s));
    const double us = median_per_call_us(s, reps, iters, [&] { CK(cudaGraphLaunch(exec, s)); });
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    return us;
}

inline double time_stream_us(const std::function<void(int)>& launch, int sets, int reps = 7) {
    for (int i = 0; i < 2 * sets; ++i) launch(i % sets);  // warm-up
    CK(cudaGetLastError());
    return median_per_call_us(nullptr, reps, 12, [&] {
        for (int i = 0; i < 12; ++i) launch(i % sets);
    });
}
