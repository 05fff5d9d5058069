#include "host/kube/proto_codec.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/evp.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <unordered_set>
#include <utility>

#include "host/model/meta.h"

// The descriptor set and the inline fields, embedded by host/kube/CMakeLists.txt.
extern const unsigned char kSchedhostKubernetesApiDescriptors[];
extern const size_t kSchedhostKubernetesApiDescriptorsSize;
extern const char kSchedhostKubernetesApiInlineFields[];

namespace schedhost::kube::proto {
namespace {

namespace pb = google::protobuf;
using Json = nlohmann::json;
using pb::Descriptor;
using pb::FieldDescriptor;
using pb::internal::WireFormatLite;

constexpr std::string_view kMagic{"k8s\0", 4};
// Objects nest far less deeply than this; a deeper message is malformed or hostile.
constexpr int kMaxDepth = 100;

// Registry is the descriptor pool built once from the embedded set, with what the JSON
// mapping treats apart.
struct Registry {
  pb::DescriptorPool pool;
  std::unordered_set<const FieldDescriptor*> inline_fields;
  const Descriptor* quantity = nullptr;
  const Descriptor* time = nullptr;
  const Descriptor* micro_time = nullptr;
  const Descriptor* duration = nullptr;
  const Descriptor* int_or_string = nullptr;
  const Descriptor* raw_extension = nullptr;
  const Descriptor* fields_v1 = nullptr;

  Registry() {
    pb::FileDescriptorSet set;
    if (!set.ParseFromArray(kSchedhostKubernetesApiDescriptors,
                            static_cast<int>(kSchedhostKubernetesApiDescriptorsSize))) {
      throw ProtoError("the embedded Kubernetes API descriptors do not parse");
    }
    for (const pb::FileDescriptorProto& file : set.file()) {
      if (pool.BuildFile(file) == nullptr) {
        throw ProtoError("the embedded Kubernetes API descriptors do not build: " + file.name());
      }
    }
    std::string_view lines(kSchedhostKubernetesApiInlineFields);
    while (!lines.empty()) {
      const size_t end = std::min(lines.find('\n'), lines.size());
      const std::string_view line = lines.substr(0, end);
      lines.remove_prefix(std::min(end + 1, lines.size()));
      if (line.empty() || line[0] == '#') continue;
      const size_t dot = line.rfind('.');
      const Descriptor* message =
          pool.FindMessageTypeByName(std::string(line.substr(0, dot)));
      const FieldDescriptor* field =
          message == nullptr ? nullptr : message->FindFieldByName(std::string(line.substr(dot + 1)));
      if (field == nullptr || field->message_type() == nullptr) {
        throw ProtoError("inline field " + std::string(line) + " is not a message field");
      }
      inline_fields.insert(field);
    }
    quantity = Find("k8s.io.apimachinery.pkg.api.resource.Quantity");
    time = Find("k8s.io.apimachinery.pkg.apis.meta.v1.Time");
    micro_time = Find("k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime");
    duration = Find("k8s.io.apimachinery.pkg.apis.meta.v1.Duration");
    int_or_string = Find("k8s.io.apimachinery.pkg.util.intstr.IntOrString");
    raw_extension = Find("k8s.io.apimachinery.pkg.runtime.RawExtension");
    fields_v1 = Find("k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1");
  }

  const Descriptor* Find(const std::string& name) const {
    const Descriptor* d = pool.FindMessageTypeByName(name);
    if (d == nullptr) throw ProtoError("the embedded Kubernetes API has no message " + name);
    return d;
  }

  // MessageFor is the message of `kind` in `api_version`, or null. Only the API's own groups
  // (the core group, "<name>.k8s.io" and single-word groups such as policy) are looked up, so
  // a custom resource never lands on a built-in kind of the same name.
  const Descriptor* MessageFor(std::string_view api_version, std::string_view kind) const {
    const size_t slash = api_version.find('/');
    const std::string_view group =
        slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
    const std::string_view version =
        slash == std::string_view::npos ? api_version : api_version.substr(slash + 1);
    std::string_view package = "core";
    if (!group.empty()) {
      constexpr std::string_view kSuffix = ".k8s.io";
      const size_t dot = group.find('.');
      if (dot == std::string_view::npos) {
        package = group;
      } else if (group.size() > kSuffix.size() && group.substr(dot) == kSuffix) {
        package = group.substr(0, dot);
      } else {
        return nullptr;
      }
    }
    std::string name = "k8s.io.api.";
    name.append(package).append(".").append(version).append(".").append(kind);
    if (const Descriptor* d = pool.FindMessageTypeByName(name)) return d;
    // Status and the other kinds of meta/v1 come with any group's version.
    name = "k8s.io.apimachinery.pkg.apis.meta.v1.";
    name.append(kind);
    return pool.FindMessageTypeByName(name);
  }
};

const Registry& Reg() {
  static const Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Unbase64(const std::string& text) {
  if (text.size() % 4 != 0) throw ProtoError("a bytes field is not base64");
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) throw ProtoError("a bytes field is not base64");
  size_t size = static_cast<size_t>(n);
  // EVP_DecodeBlock counts the padding as zero bytes.
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

// GoDuration renders nanoseconds as Go's time.Duration.String ("1h2m3.5s", "150ms", "0s").
std::string GoDuration(int64_t ns) {
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  auto fraction = [](uint64_t value, int digits) {
    // value's last `digits` decimal digits as a fraction without trailing zeros.
    std::string frac(static_cast<size_t>(digits), '0');
    for (int i = digits - 1; i >= 0; --i) {
      frac[static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
      value /= 10;
    }
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return frac.empty() ? std::string() : "." + frac;
  };
  if (u < 1'000'000'000) {
    if (u < 1'000) return sign + std::to_string(u) + "ns";
    if (u < 1'000'000) return sign + std::to_string(u / 1'000) + fraction(u % 1'000, 3) + "\xc2\xb5s";
    return sign + std::to_string(u / 1'000'000) + fraction(u % 1'000'000, 6) + "ms";
  }
  std::string out = sign;
  const uint64_t hours = u / 3'600'000'000'000;
  const uint64_t minutes = u / 60'000'000'000 % 60;
  const uint64_t secs = u / 1'000'000'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + std::to_string(secs) + fraction(u % 1'000'000'000, 9) + "s";
}

// ParseGoDuration reads what GoDuration writes (and Go's time.ParseDuration's units).
int64_t ParseGoDuration(const std::string& text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (text.substr(i) == "0") return 0;
  double total = 0;
  bool any = false;
  while (i < text.size()) {
    size_t used = 0;
    double value = 0;
    try {
      value = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      throw ProtoError("duration \"" + text + "\" does not parse");
    }
    i += used;
    size_t unit_end = i;
    while (unit_end < text.size() && (std::isdigit(static_cast<unsigned char>(text[unit_end])) == 0 &&
                                      text[unit_end] != '.')) {
      ++unit_end;
    }
    const std::string unit = text.substr(i, unit_end - i);
    i = unit_end;
    double scale = 0;
    if (unit == "ns") scale = 1;
    if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") scale = 1e3;
    if (unit == "ms") scale = 1e6;
    if (unit == "s") scale = 1e9;
    if (unit == "m") scale = 60e9;
    if (unit == "h") scale = 3600e9;
    if (scale == 0) throw ProtoError("duration \"" + text + "\" does not parse");
    total += value * scale;
    any = true;
  }
  if (!any) throw ProtoError("duration \"" + text + "\" does not parse");
  return static_cast<int64_t>(negative ? -total : total);
}

// ---- decoding ----

// SmallMessage is the fields of one of the scalar-like messages (Quantity, Time, ...): varints
// and length-delimited values by field number.
struct SmallMessage {
  uint64_t varint[4] = {0, 0, 0, 0};
  std::string bytes[4];
};

[[noreturn]] void Fail(const std::string& what) { throw ProtoError(what); }

class Decoder {
 public:
  explicit Decoder(const Registry& reg) : reg_(reg) {}

  // Message reads the fields of a `d` up to the stream's limit into `out`.
  void Message(const Descriptor* d, pb::io::CodedInputStream& in, Json& out, int depth) {
    if (depth > kMaxDepth) Fail("message nested deeper than " + std::to_string(kMaxDepth));
    if (!out.is_object()) out = Json::object();
    for (;;) {
      const uint32_t tag = in.ReadTag();
      if (tag == 0) break;
      const int number = static_cast<int>(WireFormatLite::GetTagFieldNumber(tag));
      const auto wire = WireFormatLite::GetTagWireType(tag);
      const FieldDescriptor* f = d->FindFieldByNumber(number);
      if (f == nullptr) {
        if (!WireFormatLite::SkipField(&in, tag)) Fail("a field of " + d->name() + " is cut short");
        continue;
      }
      const std::string& name = f->name();
      if (f->is_map()) {
        Json entry = Json::object();
        Nested(f->message_type(), in, entry, depth);
        Json key = entry.contains("key") ? entry["key"] : Json("");
        const std::string k = key.is_string() ? key.get<std::string>() : key.dump();
        Json& map = out[name];
        if (!map.is_object()) map = Json::object();
        map[k] = entry.contains("value") ? std::move(entry["value"]) : Json(nullptr);
        continue;
      }
      if (f->is_repeated() && f->is_packable() &&
          wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t length = 0;
        if (!in.ReadVarint32(&length)) Fail("a packed field of " + d->name() + " is cut short");
        const auto limit = in.PushLimit(static_cast<int>(length));
        Json& array = Array(out, name);
        while (in.BytesUntilLimit() > 0) array.push_back(Scalar(f, in));
        in.PopLimit(limit);
        continue;
      }
      if (wire != ExpectedWire(f)) {
        Fail("field " + name + " of " + d->name() + " has wire type " +
             std::to_string(static_cast<int>(wire)));
      }
      Json value = Value(f, in, depth);
      if (reg_.inline_fields.contains(f)) {
        if (value.is_object()) {
          for (auto& [k, v] : value.items()) out[k] = std::move(v);
        }
      } else if (f->is_repeated()) {
        Array(out, name).push_back(std::move(value));
      } else {
        out[name] = std::move(value);
      }
    }
    if (in.BytesUntilLimit() > 0 || !in.ConsumedEntireMessage()) {
      Fail("message " + d->name() + " does not parse");
    }
  }

 private:
  static Json& Array(Json& out, const std::string& name) {
    Json& array = out[name];
    if (!array.is_array()) array = Json::array();
    return array;
  }

  static WireFormatLite::WireType ExpectedWire(const FieldDescriptor* f) {
    return WireFormatLite::WireTypeForFieldType(
        static_cast<WireFormatLite::FieldType>(f->type()));
  }

  Json Scalar(const FieldDescriptor* f, pb::io::CodedInputStream& in) {
    uint64_t v64 = 0;
    uint32_t v32 = 0;
    bool ok = true;
    Json out;
    switch (f->type()) {
      case FieldDescriptor::TYPE_INT32:
      case FieldDescriptor::TYPE_ENUM:
        ok = in.ReadVarint64(&v64);
        out = static_cast<int32_t>(static_cast<uint32_t>(v64));
        break;
      case FieldDescriptor::TYPE_INT64:
        ok = in.ReadVarint64(&v64);
        out = static_cast<int64_t>(v64);
        break;
      case FieldDescriptor::TYPE_UINT32:
        ok = in.ReadVarint32(&v32);
        out = v32;
        break;
      case FieldDescriptor::TYPE_UINT64:
        ok = in.ReadVarint64(&v64);
        out = v64;
        break;
      case FieldDescriptor::TYPE_SINT32:
        ok = in.ReadVarint32(&v32);
        out = WireFormatLite::ZigZagDecode32(v32);
        break;
      case FieldDescriptor::TYPE_SINT64:
        ok = in.ReadVarint64(&v64);
        out = WireFormatLite::ZigZagDecode64(v64);
        break;
      case FieldDescriptor::TYPE_BOOL:
        ok = in.ReadVarint64(&v64);
        out = v64 != 0;
        break;
      case FieldDescriptor::TYPE_FIXED32:
      case FieldDescriptor::TYPE_SFIXED32:
      case FieldDescriptor::TYPE_FLOAT: {
        ok = in.ReadLittleEndian32(&v32);
        if (f->type() == FieldDescriptor::TYPE_FLOAT) {
          float x = 0;
          std::memcpy(&x, &v32, sizeof x);
          out = x;
        } else if (f->type() == FieldDescriptor::TYPE_SFIXED32) {
          out = static_cast<int32_t>(v32);
        } else {
          out = v32;
        }
        break;
      }
      case FieldDescriptor::TYPE_FIXED64:
      case FieldDescriptor::TYPE_SFIXED64:
      case FieldDescriptor::TYPE_DOUBLE: {
        ok = in.ReadLittleEndian64(&v64);
        if (f->type() == FieldDescriptor::TYPE_DOUBLE) {
          double x = 0;
          std::memcpy(&x, &v64, sizeof x);
          out = x;
        } else if (f->type() == FieldDescriptor::TYPE_SFIXED64) {
          out = static_cast<int64_t>(v64);
        } else {
          out = v64;
        }
        break;
      }
      default: Fail("field " + f->full_name() + " is not a scalar");
    }
    if (!ok) Fail("field " + f->full_name() + " is cut short");
    return out;
  }

  Json Value(const FieldDescriptor* f, pb::io::CodedInputStream& in, int depth) {
    switch (f->type()) {
      case FieldDescriptor::TYPE_STRING:
      case FieldDescriptor::TYPE_BYTES: {
        std::string s;
        if (!ReadBytes(in, &s)) Fail("field " + f->full_name() + " is cut short");
        if (f->type() == FieldDescriptor::TYPE_BYTES) return Base64(s);
        return s;
      }
      case FieldDescriptor::TYPE_MESSAGE: {
        Json out = Json::object();
        Nested(f->message_type(), in, out, depth);
        return out;
      }
      case FieldDescriptor::TYPE_GROUP: Fail("field " + f->full_name() + " is a group");
      default: return Scalar(f, in);
    }
    return nullptr;
  }

  static bool ReadBytes(pb::io::CodedInputStream& in, std::string* out) {
    uint32_t length = 0;
    return in.ReadVarint32(&length) && in.ReadString(out, static_cast<int>(length));
  }

  // Nested reads a length-delimited message of `d` into `out`, the JSON-mapped types included.
  void Nested(const Descriptor* d, pb::io::CodedInputStream& in, Json& out, int depth) {
    uint32_t length = 0;
    if (!in.ReadVarint32(&length)) Fail("a " + d->name() + " is cut short");
    const auto limit = in.PushLimit(static_cast<int>(length));
    if (IsSmall(d)) {
      out = Small(d, in);
    } else {
      Message(d, in, out, depth + 1);
    }
    in.PopLimit(limit);
  }

  bool IsSmall(const Descriptor* d) const {
    return d == reg_.quantity || d == reg_.time || d == reg_.micro_time || d == reg_.duration ||
           d == reg_.int_or_string || d == reg_.raw_extension || d == reg_.fields_v1;
  }

  Json Small(const Descriptor* d, pb::io::CodedInputStream& in) {
    SmallMessage m;
    for (;;) {
      const uint32_t tag = in.ReadTag();
      if (tag == 0) break;
      const uint32_t number = WireFormatLite::GetTagFieldNumber(tag);
      const auto wire = WireFormatLite::GetTagWireType(tag);
      bool ok = true;
      if (number >= 1 && number <= 3 && wire == WireFormatLite::WIRETYPE_VARINT) {
        ok = in.ReadVarint64(&m.varint[number]);
      } else if (number >= 1 && number <= 3 && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        ok = ReadBytes(in, &m.bytes[number]);
      } else {
        ok = WireFormatLite::SkipField(&in, tag);
      }
      if (!ok) Fail("a " + d->name() + " is cut short");
    }
    if (in.BytesUntilLimit() > 0) Fail("a " + d->name() + " does not parse");
    if (d == reg_.quantity) return m.bytes[1].empty() ? "0" : m.bytes[1];
    if (d == reg_.time || d == reg_.micro_time) {
      const auto seconds = static_cast<int64_t>(m.varint[1]);
      const auto nanos = static_cast<int32_t>(static_cast<uint32_t>(m.varint[2]));
      if (seconds == 0 && nanos == 0) return nullptr;
      // Time has whole seconds in JSON; MicroTime always six digits.
      if (d == reg_.time) return model::FormatRfc3339(seconds * 1'000'000'000);
      return model::FormatMicroTime(seconds * 1'000'000'000 + nanos);
    }
    if (d == reg_.duration) return GoDuration(static_cast<int64_t>(m.varint[1]));
    if (d == reg_.int_or_string) {
      if (m.varint[1] == 1) return m.bytes[3];
      return static_cast<int32_t>(static_cast<uint32_t>(m.varint[2]));
    }
    // RawExtension and FieldsV1 carry JSON (or, in a RawExtension, an enveloped object).
    const std::string& raw = m.bytes[1];
    if (raw.empty()) return nullptr;
    if (raw.size() >= kMagic.size() && std::string_view(raw).substr(0, 4) == kMagic) {
      return DecodeObject(raw);
    }
    Json parsed = Json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) Fail("a " + d->name() + " does not hold JSON");
    return parsed;
  }

  const Registry& reg_;
};

// Unknown is runtime.Unknown's fields.
struct Unknown {
  std::string api_version, kind, raw, content_encoding;
};

// ReadStringFields reads the length-delimited fields of `message` numbered in `fields` into
// their strings and skips every other field (the small messages around an object: the
// envelope, its typeMeta, a WatchEvent and its RawExtension). Throws ProtoError naming `what`.
void ReadStringFields(std::string_view message,
                      std::initializer_list<std::pair<int, std::string*>> fields,
                      const std::string& what) {
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()),
                              static_cast<int>(message.size()));
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    std::string* out = nullptr;
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      for (const auto& [number, field] : fields) {
        if (number == WireFormatLite::GetTagFieldNumber(tag)) out = field;
      }
    }
    if (out == nullptr) {
      if (!WireFormatLite::SkipField(&in, tag)) throw ProtoError(what + " does not parse");
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length) || !in.ReadString(out, static_cast<int>(length))) {
      throw ProtoError(what + " is cut short");
    }
  }
  if (!in.ConsumedEntireMessage()) throw ProtoError(what + " does not parse");
}

Unknown ReadEnvelope(std::string_view bytes) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    throw ProtoError("not a Kubernetes protobuf object (no k8s\\0 prefix)");
  }
  bytes.remove_prefix(kMagic.size());
  Unknown u;
  std::string type_meta;
  ReadStringFields(bytes, {{1, &type_meta}, {2, &u.raw}, {3, &u.content_encoding}},
                   "the object's envelope");
  ReadStringFields(type_meta, {{1, &u.api_version}, {2, &u.kind}}, "the object's typeMeta");
  return u;
}

// ---- encoding ----

void PutTag(std::string& out, int number, WireFormatLite::WireType wire) {
  pb::io::StringOutputStream stream(&out);
  pb::io::CodedOutputStream o(&stream);
  o.WriteTag(WireFormatLite::MakeTag(number, wire));
}

void PutVarint(std::string& out, uint64_t v) {
  pb::io::StringOutputStream stream(&out);
  pb::io::CodedOutputStream o(&stream);
  o.WriteVarint64(v);
}

void PutBytes(std::string& out, int number, std::string_view bytes) {
  PutTag(out, number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

class Encoder {
 public:
  explicit Encoder(const Registry& reg) : reg_(reg) {}

  // Message writes `object` as a `d`; the keys in `skip` are left out (apiVersion, kind).
  std::string Message(const Descriptor* d, const Json& object, int depth,
                      const std::unordered_set<std::string>& skip = {}) {
    if (depth > kMaxDepth) throw ProtoError("object nested deeper than " + std::to_string(kMaxDepth));
    if (!object.is_object()) throw ProtoError(d->name() + " is not an object");
    std::string out;
    // Keys of inline fields, gathered per field to be written as one message each.
    std::vector<std::pair<const FieldDescriptor*, Json>> inlined;
    for (const auto& [key, value] : object.items()) {
      if (skip.contains(key) || value.is_null()) continue;
      const FieldDescriptor* f = d->FindFieldByName(key);
      if (f == nullptr || reg_.inline_fields.contains(f)) {
        const FieldDescriptor* owner = nullptr;
        for (int i = 0; i < d->field_count() && owner == nullptr; ++i) {
          const FieldDescriptor* g = d->field(i);
          if (reg_.inline_fields.contains(g) && g->message_type()->FindFieldByName(key) != nullptr) {
            owner = g;
          }
        }
        if (owner == nullptr) {
          throw ProtoError("field \"" + key + "\" has no place in " + d->full_name());
        }
        auto it = std::find_if(inlined.begin(), inlined.end(),
                               [&](const auto& p) { return p.first == owner; });
        if (it == inlined.end()) it = inlined.insert(inlined.end(), {owner, Json::object()});
        it->second[key] = value;
        continue;
      }
      Field(f, value, out, depth);
    }
    for (const auto& [f, value] : inlined) Field(f, value, out, depth);
    return out;
  }

 private:
  void Field(const FieldDescriptor* f, const Json& value, std::string& out, int depth) {
    if (f->is_map()) {
      if (!value.is_object()) throw ProtoError(f->full_name() + " is not an object");
      const Descriptor* entry = f->message_type();
      for (const auto& [k, v] : value.items()) {
        std::string bytes;
        One(entry->FindFieldByNumber(1), k, bytes, depth);
        if (!v.is_null()) One(entry->FindFieldByNumber(2), v, bytes, depth);
        PutBytes(out, f->number(), bytes);
      }
      return;
    }
    if (f->is_repeated()) {
      if (!value.is_array()) throw ProtoError(f->full_name() + " is not an array");
      for (const Json& v : value) One(f, v, out, depth);
      return;
    }
    One(f, value, out, depth);
  }

  void One(const FieldDescriptor* f, const Json& v, std::string& out, int depth) {
    const int n = f->number();
    auto want = [&](bool ok) {
      if (!ok) throw ProtoError(f->full_name() + " has a value of the wrong type: " + v.dump());
    };
    switch (f->type()) {
      case FieldDescriptor::TYPE_STRING:
        want(v.is_string());
        PutBytes(out, n, v.get_ref<const std::string&>());
        return;
      case FieldDescriptor::TYPE_BYTES:
        want(v.is_string());
        PutBytes(out, n, Unbase64(v.get<std::string>()));
        return;
      case FieldDescriptor::TYPE_BOOL:
        want(v.is_boolean());
        PutTag(out, n, WireFormatLite::WIRETYPE_VARINT);
        PutVarint(out, v.get<bool>() ? 1 : 0);
        return;
      case FieldDescriptor::TYPE_INT32:
      case FieldDescriptor::TYPE_INT64:
      case FieldDescriptor::TYPE_ENUM:
        want(v.is_number_integer());
        PutTag(out, n, WireFormatLite::WIRETYPE_VARINT);
        PutVarint(out, static_cast<uint64_t>(v.get<int64_t>()));
        return;
      case FieldDescriptor::TYPE_UINT32:
      case FieldDescriptor::TYPE_UINT64:
        want(v.is_number_unsigned());
        PutTag(out, n, WireFormatLite::WIRETYPE_VARINT);
        PutVarint(out, v.get<uint64_t>());
        return;
      case FieldDescriptor::TYPE_DOUBLE: {
        want(v.is_number());
        const double x = v.get<double>();
        uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        PutTag(out, n, WireFormatLite::WIRETYPE_FIXED64);
        char le[8];
        for (int i = 0; i < 8; ++i) le[i] = static_cast<char>(bits >> (8 * i));
        out.append(le, 8);
        return;
      }
      case FieldDescriptor::TYPE_MESSAGE:
        PutBytes(out, n, MessageValue(f->message_type(), v, depth));
        return;
      default: throw ProtoError(f->full_name() + ": type not written by the host");
    }
  }

  std::string MessageValue(const Descriptor* d, const Json& v, int depth) {
    std::string out;
    if (d == reg_.quantity) {
      if (v.is_number()) {
        PutBytes(out, 1, v.dump());
      } else {
        if (!v.is_string()) throw ProtoError("a quantity is not a string: " + v.dump());
        PutBytes(out, 1, v.get_ref<const std::string&>());
      }
      return out;
    }
    if (d == reg_.time || d == reg_.micro_time) {
      if (!v.is_string()) throw ProtoError("a time is not a string: " + v.dump());
      const std::optional<int64_t> ns = model::ParseRfc3339(v.get_ref<const std::string&>());
      if (!ns) throw ProtoError("time \"" + v.get<std::string>() + "\" is not RFC 3339");
      int64_t seconds = *ns / 1'000'000'000;
      int64_t nanos = *ns % 1'000'000'000;
      if (nanos < 0) {
        nanos += 1'000'000'000;
        --seconds;
      }
      PutTag(out, 1, WireFormatLite::WIRETYPE_VARINT);
      PutVarint(out, static_cast<uint64_t>(seconds));
      if (d == reg_.micro_time && nanos != 0) {
        PutTag(out, 2, WireFormatLite::WIRETYPE_VARINT);
        PutVarint(out, static_cast<uint64_t>(nanos));
      }
      return out;
    }
    if (d == reg_.duration) {
      if (!v.is_string()) throw ProtoError("a duration is not a string: " + v.dump());
      PutTag(out, 1, WireFormatLite::WIRETYPE_VARINT);
      PutVarint(out, static_cast<uint64_t>(ParseGoDuration(v.get<std::string>())));
      return out;
    }
    if (d == reg_.int_or_string) {
      PutTag(out, 1, WireFormatLite::WIRETYPE_VARINT);
      if (v.is_string()) {
        PutVarint(out, 1);
        PutBytes(out, 3, v.get_ref<const std::string&>());
      } else if (v.is_number_integer()) {
        PutVarint(out, 0);
        PutTag(out, 2, WireFormatLite::WIRETYPE_VARINT);
        PutVarint(out, static_cast<uint64_t>(v.get<int64_t>()));
      } else {
        throw ProtoError("an int-or-string is neither: " + v.dump());
      }
      return out;
    }
    if (d == reg_.raw_extension || d == reg_.fields_v1) {
      PutBytes(out, 1, v.dump());
      return out;
    }
    return Message(d, v, depth + 1);
  }

  const Registry& reg_;
};

}  // namespace

bool Supports(std::string_view api_version, std::string_view kind) {
  return Reg().MessageFor(api_version, kind) != nullptr;
}

bool IsProtobuf(std::string_view content_type) {
  return content_type.substr(0, kContentType.size()) == kContentType;
}

nlohmann::json DecodeObject(std::string_view bytes) {
  const Registry& reg = Reg();
  const Unknown u = ReadEnvelope(bytes);
  if (!u.content_encoding.empty()) {
    throw ProtoError("object with content encoding \"" + u.content_encoding + "\"");
  }
  const Descriptor* d = reg.MessageFor(u.api_version, u.kind);
  if (d == nullptr) {
    throw ProtoError("no protobuf message for kind " + u.kind + " of " + u.api_version);
  }
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(u.raw.data()),
                              static_cast<int>(u.raw.size()));
  in.SetTotalBytesLimit(static_cast<int>(std::min<size_t>(u.raw.size() + 1, INT32_MAX)));
  const auto limit = in.PushLimit(static_cast<int>(u.raw.size()));
  Json out = Json::object();
  try {
    Decoder(reg).Message(d, in, out, 0);
  } catch (const ProtoError& e) {
    throw ProtoError(u.kind + " of " + u.api_version + ": " + e.what());
  }
  in.PopLimit(limit);
  if (!u.api_version.empty()) out["apiVersion"] = u.api_version;
  if (!u.kind.empty()) out["kind"] = u.kind;
  return out;
}

std::string EncodeObject(const nlohmann::json& object) {
  const Registry& reg = Reg();
  if (!object.is_object()) throw ProtoError("the object to encode is not an object");
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const Descriptor* d = reg.MessageFor(api_version, kind);
  if (d == nullptr) throw ProtoError("no protobuf message for kind " + kind + " of " + api_version);
  const std::string raw = Encoder(reg).Message(d, object, 0, {"apiVersion", "kind"});
  std::string type_meta;
  PutBytes(type_meta, 1, api_version);
  PutBytes(type_meta, 2, kind);
  std::string out(kMagic);
  PutBytes(out, 1, type_meta);
  PutBytes(out, 2, raw);
  return out;
}

bool WatchStream::Next(nlohmann::json* event) {
  if (buffer_.size() - offset_ < 4) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  const size_t length = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) | (size_t{p[2]} << 8) | p[3];
  if (length > kMaxFrame) throw ProtoError("watch frame of " + std::to_string(length) + " bytes");
  if (buffer_.size() - offset_ - 4 < length) return false;
  const std::string_view frame(buffer_.data() + offset_ + 4, length);
  offset_ += 4 + length;
  // WatchEvent: type = 1, object = 2 (a RawExtension whose raw = 1 is an enveloped object).
  std::string type;
  std::string extension;
  std::string object_bytes;
  ReadStringFields(frame, {{1, &type}, {2, &extension}}, "a watch event");
  ReadStringFields(extension, {{1, &object_bytes}}, "a watch event's object");
  *event = Json{{"type", std::move(type)}, {"object", DecodeObject(object_bytes)}};
  // Drop what was read once it is most of the buffer, so the buffer does not grow unbounded.
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > size_t{64} * 1024 && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return true;
}

}  // namespace schedhost::kube::proto
