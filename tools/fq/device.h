// The few CUDA runtime calls the subcommands need, behind a CUDA-free interface so fq builds (and
// quantize-weights runs on the host backend) without CUDA. device.cpp implements them with the CUDA runtime,
// or, in a build without CUDA, as "no device".
#pragma once

#include <cstddef>
#include <string>

namespace fqtool {

bool cuda_available(std::string* why);  // a usable CUDA device and a CUDA build of fq
int device_count(std::string* why);     // CUDA devices seen (0, with the reason, when none or no CUDA build)
// Device memory; throws ToolError on failure.
void* device_alloc(size_t bytes);
void device_free(void* p);
void copy_to_device(void* dst, const void* src, size_t bytes);
void copy_to_host(void* dst, const void* src, size_t bytes);
void device_fill(void* p, int byte, size_t bytes);
void device_synchronize();

// RAII device buffer.
struct DeviceBuffer {
    void* p = nullptr;
    size_t bytes = 0;
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t n) : p(device_alloc(n)), bytes(n) {}
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : p(o.p), bytes(o.bytes) { o.p = nullptr; }
    ~DeviceBuffer() { device_free(p); }
};

}  // namespace fqtool
