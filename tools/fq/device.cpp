#include "device.h"

#include "cli.h"

#if defined(FQ_TOOL_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace fqtool {

#if defined(FQ_TOOL_WITH_CUDA)
namespace {
void cuda_check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw ToolError(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace

int device_count(std::string* why) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (why) *why = e == cudaSuccess ? "no CUDA device" : cudaGetErrorString(e);
        cudaGetLastError();
        return 0;
    }
    return n;
}
void* device_alloc(size_t bytes) {
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, bytes ? bytes : 16), "cudaMalloc");
    return p;
}
void device_free(void* p) {
    if (p) cudaFree(p);
}
void copy_to_device(void* dst, const void* src, size_t bytes) {
    if (bytes) cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}
void copy_to_host(void* dst, const void* src, size_t bytes) {
    if (bytes) cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}
void device_fill(void* p, int byte, size_t bytes) {
    if (bytes) cuda_check(cudaMemset(p, byte, bytes), "cudaMemset");
}
void device_synchronize() { cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (a kernel failed)"); }
#else
int device_count(std::string* why) {
    if (why) *why = "this fq was built without CUDA (FQ_ENABLE_CUDA=OFF)";
    return 0;
}
void* device_alloc(size_t) { throw ToolError("no CUDA in this build"); }
void device_free(void*) {}
void copy_to_device(void*, const void*, size_t) { throw ToolError("no CUDA in this build"); }
void copy_to_host(void*, const void*, size_t) { throw ToolError("no CUDA in this build"); }
void device_fill(void*, int, size_t) { throw ToolError("no CUDA in this build"); }
void device_synchronize() {}
#endif

bool cuda_available(std::string* why) { return device_count(why) > 0; }

}  // namespace fqtool
