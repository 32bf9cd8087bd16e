// .safetensors files: an 8-byte little-endian header length N, N bytes of JSON ({"name": {"dtype", "shape",
// "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}), then the raw tensor bytes
// (offsets relative to the end of the header). Reading loads the header and one tensor at a time; writing
// declares every tensor first, writes the header, then streams the data in the declared order, so neither
// holds a whole checkpoint in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "json.h"

namespace fqtool {

struct TensorInfo {
    std::string name, dtype;  // dtype as safetensors spells it: BF16, F16, F32, F8_E4M3, U8, ...
    std::vector<int64_t> shape;
    uint64_t begin = 0, end = 0;  // byte offsets in the data section
    uint64_t bytes() const { return end - begin; }
    int64_t elements() const;
};

// Bytes of one element of a safetensors dtype, or 0 when unknown.
size_t dtype_size(const std::string& dtype);

class SafetensorsReader {
public:
    explicit SafetensorsReader(const std::string& path);  // throws std::runtime_error naming the problem
    ~SafetensorsReader();
    SafetensorsReader(const SafetensorsReader&) = delete;
    SafetensorsReader& operator=(const SafetensorsReader&) = delete;

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const Json& metadata() const { return metadata_; }  // an object (empty when the file has none)
    const TensorInfo* find(const std::string& name) const;
    std::vector<uint8_t> read(const TensorInfo& t) const;

private:
    std::string path_;
    FILE* f_ = nullptr;
    uint64_t data_start_ = 0;
    std::vector<TensorInfo> tensors_;
    Json metadata_ = Json::make_object();
};

class SafetensorsWriter {
public:
    void declare(const std::string& name, const std::string& dtype, std::vector<int64_t> shape, uint64_t bytes);
    // Writes the header (padded with spaces to a multiple of 8 bytes, as the reference implementation does).
    void begin(const std::string& path, const Json& metadata);
    // The data of the next declared tensor; its size must be the declared one.
    void write_next(const std::string& name, const void* data, size_t bytes);
    void finish();  // checks every declared tensor was written, closes the file
    ~SafetensorsWriter();

private:
    std::vector<TensorInfo> tensors_;
    uint64_t next_offset_ = 0;
    size_t written_ = 0;
    FILE* f_ = nullptr;
    std::string path_;
};

}  // namespace fqtool
