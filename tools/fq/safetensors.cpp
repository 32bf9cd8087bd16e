#include "safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>

namespace fqtool {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's MAX_HEADER_SIZE

std::runtime_error failure(const std::string& path, const std::string& what) {
    return std::runtime_error(path + ": " + what);
}

// The header's tensors as the reference implementation checks them (see the class comment).
void validate_offsets(const std::string& path, std::vector<const TensorInfo*> sorted, uint64_t data_bytes) {
    std::sort(sorted.begin(), sorted.end(), [](const TensorInfo* a, const TensorInfo* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    uint64_t expected = 0;
    for (const TensorInfo* t : sorted) {
        if (t->begin != expected)
            throw failure(path, "tensor \"" + t->name + "\": data_offsets [" + std::to_string(t->begin) + ", " +
                                    std::to_string(t->end) + "] " + (t->begin < expected ? "overlap" : "leave a gap after") +
                                    " the tensor before it (byte " + std::to_string(expected) + ")");
        expected = t->end;
    }
    if (expected != data_bytes)
        throw failure(path, "the tensors cover " + std::to_string(expected) + " bytes of a data section of " +
                                std::to_string(data_bytes) + (expected > data_bytes ? " (offsets past the end of the file)" : ""));
}

TensorInfo parse_tensor(const std::string& name, const JsonMap& e) {
    if (!e.is_object()) throw std::runtime_error("not an object");
    TensorInfo t;
    t.name = name;
    const JsonMap& dtype = e.at("dtype");
    if (!dtype.is_string()) throw std::runtime_error("dtype is not a string");
    t.dtype = dtype.get<std::string>();
    if (!dtype_bits(t.dtype)) throw std::runtime_error("unknown dtype \"" + t.dtype + "\"");
    const JsonMap& shape = e.at("shape");
    if (!shape.is_array()) throw std::runtime_error("shape is not an array");
    uint64_t elements = 1;
    for (const JsonMap& d : shape) {
        if (!d.is_number_unsigned()) throw std::runtime_error("shape holds " + d.dump() + ", not a non-negative integer");
        const uint64_t n = d.get<uint64_t>();
        if (n && elements > std::numeric_limits<uint64_t>::max() / 64 / n) throw std::runtime_error("shape overflows");
        elements *= n;
        t.shape.push_back(int64_t(n));
    }
    const JsonMap& off = e.at("data_offsets");
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
        throw std::runtime_error("data_offsets is not [begin, end] of non-negative integers");
    t.begin = off[0].get<uint64_t>();
    t.end = off[1].get<uint64_t>();
    if (t.end < t.begin) throw std::runtime_error("data_offsets end before they begin");
    const uint64_t bits = elements * dtype_bits(t.dtype);
    if (bits % 8 != 0 || bits / 8 != t.bytes())
        throw std::runtime_error("shape and dtype need " + std::to_string(bits / 8) + (bits % 8 ? ".5" : "") +
                                 " bytes, data_offsets give " + std::to_string(t.bytes()));
    return t;
}

// A JSON object keeps one value per key, so a tensor name written twice is found on a second pass over the
// header's events (nlohmann's SAX interface; a parse callback would make the parse quadratic in the number of
// tensors): the first top-level key seen before, or "".
std::string first_repeated_key(const std::string& header) {
    struct Keys : nlohmann::json_sax<JsonMap> {
        int depth = 0;
        std::set<std::string> seen;
        std::string repeated;
        bool key(string_t& k) override {
            if (depth == 1 && !seen.insert(k).second && repeated.empty()) repeated = k;
            return true;
        }
        bool start_object(std::size_t) override { return ++depth, true; }
        bool end_object() override { return --depth, true; }
        bool start_array(std::size_t) override { return ++depth, true; }
        bool end_array() override { return --depth, true; }
        bool null() override { return true; }
        bool boolean(bool) override { return true; }
        bool number_integer(number_integer_t) override { return true; }
        bool number_unsigned(number_unsigned_t) override { return true; }
        bool number_float(number_float_t, const string_t&) override { return true; }
        bool string(string_t&) override { return true; }
        bool binary(binary_t&) override { return true; }
        bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
    } keys;
    JsonMap::sax_parse(header, &keys);
    return keys.repeated;
}

}  // namespace

size_t dtype_bits(const std::string& d) {
    if (d == "F64" || d == "I64" || d == "U64" || d == "C64") return 64;
    if (d == "F32" || d == "I32" || d == "U32") return 32;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 16;
    if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0" ||
        d == "F8_E4M3FNUZ" || d == "F8_E5M2FNUZ")
        return 8;
    if (d == "F6_E2M3" || d == "F6_E3M2") return 6;
    if (d == "F4") return 4;
    return 0;
}

int64_t TensorInfo::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw failure(path, std::string("cannot open: ") + std::strerror(errno));
    uint8_t len_bytes[8];
    if (std::fread(len_bytes, 1, 8, f_) != 8) throw failure(path, "shorter than the 8-byte header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];  // little-endian, whatever the host's order
    std::fseek(f_, 0, SEEK_END);
    file_bytes_ = uint64_t(ftello(f_));
    if (n > file_bytes_ - 8) throw failure(path, "header length " + std::to_string(n) + " exceeds the file");
    if (n > kMaxHeaderBytes) throw failure(path, "header length " + std::to_string(n) + " exceeds 100 MB");
    std::string header(size_t(n), '\0');
    fseeko(f_, 8, SEEK_SET);
    if (std::fread(header.data(), 1, n, f_) != n) throw failure(path, "truncated header");
    data_start_ = 8 + n;

    JsonMap h;
    try {
        h = JsonMap::parse(header);
    } catch (const JsonMap::exception& e) {
        throw failure(path, std::string("header is not JSON: ") + e.what());
    }
    const std::string repeated = first_repeated_key(header);
    if (!repeated.empty()) throw failure(path, "tensor \"" + repeated + "\" appears twice in the header");
    if (!h.is_object()) throw failure(path, "header is not a JSON object");
    for (const auto& kv : h.items()) {
        if (kv.key() == "__metadata__") {
            if (!kv.value().is_object()) throw failure(path, "__metadata__ is not an object");
            for (const auto& m : kv.value().items())
                if (!m.value().is_string()) throw failure(path, "__metadata__ \"" + m.key() + "\" is not a string");
            metadata_ = kv.value();
            continue;
        }
        try {
            tensors_.push_back(parse_tensor(kv.key(), kv.value()));
        } catch (const std::exception& e) {
            throw failure(path, "tensor \"" + kv.key() + "\": " + e.what());
        }
    }
    // Read in the order of the data: one pass through the file.
    std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.begin < b.begin; });
    std::vector<const TensorInfo*> all;
    for (const TensorInfo& t : tensors_) all.push_back(&t);
    validate_offsets(path, all, file_bytes_ - data_start_);
}

SafetensorsReader::~SafetensorsReader() {
    if (f_) std::fclose(f_);
}

const TensorInfo* SafetensorsReader::find(const std::string& name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

std::vector<uint8_t> SafetensorsReader::read(const TensorInfo& t) const {
    std::vector<uint8_t> v(size_t(t.bytes()));
    fseeko(f_, off_t(data_start_ + t.begin), SEEK_SET);
    if (std::fread(v.data(), 1, v.size(), f_) != v.size()) throw failure(path_, "tensor \"" + t.name + "\": short read");
    return v;
}

void SafetensorsWriter::declare(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
                                uint64_t bytes) {
    if (f_) throw std::runtime_error("safetensors: declare after begin");
    if (!names_.insert(name).second) throw std::runtime_error("two tensors named \"" + name + "\" in one output file");
    TensorInfo t{name, dtype, std::move(shape), next_offset_, next_offset_ + bytes};
    next_offset_ = t.end;
    tensors_.push_back(std::move(t));
}

void SafetensorsWriter::begin(const std::string& path, const JsonMap& metadata) {
    JsonMap h = JsonMap::object();
    if (metadata.is_object() && !metadata.empty()) h["__metadata__"] = metadata;
    for (const TensorInfo& t : tensors_)
        h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {t.begin, t.end}}};
    std::string header = h.dump();
    header.append((8 - header.size() % 8) % 8, ' ');
    header_bytes_ = 8 + header.size();
    path_ = path;
    std::string temp = path + ".fq-tmp-XXXXXX";  // same directory: rename() is atomic there
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) throw failure(path, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
    temp_path_ = temp;
    ::fchmod(fd, 0644);
    f_ = ::fdopen(fd, "wb");
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
    if (!f_ || std::fwrite(len, 1, 8, f_) != 8 || std::fwrite(header.data(), 1, header.size(), f_) != header.size())
        throw failure(temp_path_, "write failed");
}

void SafetensorsWriter::write_next(const std::string& name, const void* data, size_t bytes) {
    if (!f_ || written_ >= tensors_.size() || tensors_[written_].name != name || tensors_[written_].bytes() != bytes)
        throw std::runtime_error("safetensors: \"" + name + "\" written out of its declared order or size");
    if (bytes && std::fwrite(data, 1, bytes, f_) != bytes) throw failure(temp_path_, std::string("write failed: ") + std::strerror(errno));
    ++written_;
}

void SafetensorsWriter::finish() {
    if (written_ != tensors_.size())
        throw std::runtime_error("safetensors: " + std::to_string(tensors_.size() - written_) + " declared tensors not written");
    FILE* f = f_;
    f_ = nullptr;
    if (!f || std::fclose(f) != 0) throw failure(temp_path_, "close failed");
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0)
        throw failure(path_, std::string("cannot rename the finished temporary file to it: ") + std::strerror(errno));
    temp_path_.clear();
}

SafetensorsWriter::~SafetensorsWriter() {
    if (f_) std::fclose(f_);
    if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

}  // namespace fqtool
