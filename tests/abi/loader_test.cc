// Loads every test plugin of tests/abi into this g++-built host through PluginRegistry and calls
// it through its descriptor with hand-made views, then checks every bad library is refused with
// a message that names the file, the versions and the fix (docs/abi.md rule 13).
#include "host/loader/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "host/loader/sha256.h"

// The host-side definitions of two opaque ABI handles, as this test host implements them.
struct schedhost_status {
  std::vector<std::string> reasons;
};
struct schedhost_host {
  int unused = 0;
};

namespace schedhost::loader {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConstructorMarker = "SCHEDHOST_ABI_TEST_CONSTRUCTOR_RAN";
// kAbi is this header's ABI version as the loader prints it ("1.N").
const std::string kAbi = "1." + std::to_string(SCHEDHOST_ABI_MINOR);

fs::path PluginPath(const char* file) { return fs::path(SCHEDHOST_ABI_PLUGIN_DIR) / file; }

// --- a minimal host API: reasons, interning; everything else NULL ---------------------------

std::vector<std::string>& InternTable() {
  static std::vector<std::string> table(SCHEDHOST_ID_WELL_KNOWN_COUNT);
  return table;
}

schedhost_id FakeLookup(schedhost_host*, schedhost_str s) noexcept {
  const std::string_view v(s.data, s.len);
  const auto& t = InternTable();
  for (size_t i = SCHEDHOST_ID_WELL_KNOWN_COUNT; i < t.size(); ++i) {
    if (t[i] == v) return static_cast<schedhost_id>(i);
  }
  return 0;
}

schedhost_id FakeIntern(schedhost_host* host, schedhost_str s) noexcept {
  if (s.len == 0) return 0;
  if (schedhost_id id = FakeLookup(host, s)) return id;
  InternTable().emplace_back(s.data, s.len);
  return static_cast<schedhost_id>(InternTable().size() - 1);
}

schedhost_id Id(std::string_view s) { return FakeIntern(nullptr, {s.data(), s.size()}); }

void FakeAddReason(schedhost_status* status, schedhost_str reason) noexcept {
  status->reasons.emplace_back(reason.data, reason.len);
}

// The fake cycle state: a state pointer is an int64_t's address, the value of "gcc-limit"; a
// null state holds nothing. Every read is counted.
std::atomic<int> g_state_reads{0};
int32_t FakeCycleStateRead(const schedhost_cycle_state* state, schedhost_id key,
                           void** out) noexcept {
  g_state_reads.fetch_add(1);
  if (state == nullptr || key != Id("gcc-limit")) return SCHEDHOST_E_NOT_FOUND;
  *out = const_cast<schedhost_cycle_state*>(state);
  return SCHEDHOST_OK;
}

const schedhost_host_api* TestApi() {
  static const schedhost_host_api api = [] {
    schedhost_host_api a{};
    a.struct_size = sizeof a;
    a.abi_major = SCHEDHOST_ABI_MAJOR;
    a.abi_minor = SCHEDHOST_ABI_MINOR;
    a.status_add_reason = &FakeAddReason;
    a.intern = &FakeIntern;
    a.lookup_id = &FakeLookup;
    a.cycle_state_read = &FakeCycleStateRead;
    return a;
  }();
  return &api;
}

// --- views built by hand ----------------------------------------------------------------------

using LabelMap = std::map<std::string, std::string>;

// FakeNode is a node info view over one node with `labels`; it points into itself, so it is
// neither copied nor moved.
struct FakeNode {
  std::string name;
  std::vector<schedhost_label> labels;  // sorted by key id
  schedhost_node_view node{};
  schedhost_node_info_view info{};

  explicit FakeNode(const LabelMap& kv = {}, std::string node_name = "node-1")
      : name(std::move(node_name)) {
    for (const auto& [k, v] : kv) labels.push_back({Id(k), Id(v)});
    std::sort(labels.begin(), labels.end(),
              [](const schedhost_label& a, const schedhost_label& b) { return a.key < b.key; });
    node.struct_size = sizeof node;
    node.name = {name.data(), name.size()};
    node.labels = {labels.data(), labels.size()};
    info.struct_size = sizeof info;
    info.node = &node;
  }
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;
};

struct FakePod {
  std::string name;
  schedhost_pod_view view{};

  explicit FakePod(std::string n) : name(std::move(n)) {
    view.struct_size = sizeof view;
    view.name = {name.data(), name.size()};
    view.namespace_name = {"default", 7};
    view.namespace_id = SCHEDHOST_ID_NAMESPACE_DEFAULT;
  }
};

// Instance creates and destroys one plugin instance through its descriptor.
class Instance {
 public:
  explicit Instance(const schedhost_plugin_descriptor* d) : d_(d) {
    schedhost_status status;
    const int32_t rc = d_->create(TestApi(), &host_, nullptr, &instance_, &status);
    EXPECT_EQ(rc, SCHEDHOST_SUCCESS) << (status.reasons.empty() ? "" : status.reasons[0]);
  }
  ~Instance() {
    if (d_->destroy != nullptr) d_->destroy(instance_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  int32_t Filter(const FakePod& pod, const FakeNode& node, schedhost_status& status,
                 const schedhost_cycle_state* state = nullptr) const {
    return d_->filter(instance_, state, &pod.view, &node.info, &status);
  }
  int32_t Score(const FakePod& pod, const FakeNode& node, int64_t& score) const {
    schedhost_status status;
    return d_->score(instance_, nullptr, &pod.view, &node.info, &score, &status);
  }
  int32_t FilterBatch(const FakePod& pod, const std::vector<const schedhost_node_info_view*>& nodes,
                      size_t& passed, schedhost_status& status,
                      const schedhost_cycle_state* state = nullptr) const {
    return d_->filter_batch(instance_, state, &pod.view, nodes.data(), nodes.size(), &passed,
                            &status);
  }
  int32_t ScoreBatch(const FakePod& pod, const std::vector<const schedhost_node_info_view*>& nodes,
                     std::vector<int64_t>& scores, schedhost_status& status,
                     const schedhost_cycle_state* state = nullptr) const {
    scores.assign(nodes.size(), -1);
    return d_->score_batch(instance_, state, &pod.view, nodes.data(), nodes.size(), scores.data(),
                           &status);
  }

 private:
  const schedhost_plugin_descriptor* d_;
  schedhost_host host_;
  void* instance_ = nullptr;
};

std::string ReadFileHash(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return Sha256Hex(bytes);
}

std::string LoadFailure(PluginRegistry& r, const fs::path& p,
                        const schedhost_host_api* api = TestApi()) {
  try {
    r.LoadLibrary(p, api);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "(loaded)";
}

// TempDir is a scratch directory removed at the end of a test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "schedhost_abi_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path Write(const char* name, const std::vector<char>& bytes) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  fs::path path_;
};

// --- good plugins -----------------------------------------------------------------------------

TEST(AbiLoaderTest, C99PluginFiltersAndScoresThroughTheDescriptor) {
  PluginRegistry registry;
  const fs::path path = PluginPath("c99_plugin.so");
  const auto lib = registry.LoadLibrary(path, TestApi());
  EXPECT_EQ(lib->path(), path);
  EXPECT_EQ(lib->sha256(), ReadFileHash(path));
  EXPECT_EQ(lib->abi_major(), 1u);
  EXPECT_EQ(lib->abi_minor(), static_cast<uint32_t>(SCHEDHOST_ABI_MINOR));
  EXPECT_EQ(lib->sdk_version(), SCHEDHOST_SDK_VERSION);
  ASSERT_EQ(lib->manifest().plugins.size(), 1u);
  EXPECT_EQ(lib->manifest().plugins[0].name, "CNodeLabel");
#if defined(__clang__)
  EXPECT_EQ(lib->manifest().compiler.rfind("clang ", 0), 0u) << lib->manifest().compiler;
#else
  EXPECT_EQ(lib->manifest().compiler.rfind("gcc ", 0), 0u) << lib->manifest().compiler;
#endif

  const PluginEntry* entry = registry.Find("CNodeLabel");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->library, lib);
  EXPECT_EQ(ImplementedPoints(*entry->descriptor), kFilterBit | kScoreBit);

  Instance plugin(entry->descriptor);
  const FakePod pod("web");
  const FakeNode yes(LabelMap{{"c99", "yes"}, {"zone", "a"}, {"disk", "ssd"}});
  const FakeNode no(LabelMap{{"c99", "no"}});
  const FakeNode none;
  schedhost_status ok, rejected, missing;
  EXPECT_EQ(plugin.Filter(pod, yes, ok), SCHEDHOST_SUCCESS);
  EXPECT_TRUE(ok.reasons.empty());
  EXPECT_EQ(plugin.Filter(pod, no, rejected), SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(rejected.reasons, std::vector<std::string>{"node(s) didn't have label c99=yes"});
  EXPECT_EQ(plugin.Filter(pod, none, missing), SCHEDHOST_UNSCHEDULABLE);
  int64_t score = -1;
  EXPECT_EQ(plugin.Score(pod, yes, score), SCHEDHOST_SUCCESS);
  EXPECT_EQ(score, 3);
  EXPECT_EQ(plugin.Score(pod, none, score), SCHEDHOST_SUCCESS);
  EXPECT_EQ(score, 0);
}

TEST(AbiLoaderTest, GccPluginThrowBecomesErrorStatus) {
  PluginRegistry registry;
  registry.LoadLibrary(PluginPath("gcc_plugin.so"), TestApi());
  const PluginEntry* entry = registry.Find("GccPlugin");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(ImplementedPoints(*entry->descriptor), kFilterBit | kScoreBit);
  Instance plugin(entry->descriptor);
  const FakeNode node;
  schedhost_status fine, thrown, rejected, after;
  EXPECT_EQ(plugin.Filter(FakePod("web"), node, fine), SCHEDHOST_SUCCESS);
  EXPECT_EQ(plugin.Filter(FakePod("throw"), node, thrown), SCHEDHOST_ERROR);
  EXPECT_EQ(thrown.reasons, std::vector<std::string>{"boom from libstdc++"});
  EXPECT_EQ(plugin.Filter(FakePod("reject"), node, rejected), SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(rejected.reasons, std::vector<std::string>{"GccPlugin says no"});
  EXPECT_EQ(plugin.Filter(FakePod("web"), node, after), SCHEDHOST_SUCCESS);  // carries on
}

// The SDK fills the abi 1.2 batched entries of every C++ plugin from its Filter and Score: a
// batch stops at the first node that does not pass, with that node's code and reasons, and an
// exception in the middle of a batch reports the nodes that passed before it.
TEST(AbiLoaderTest, SdkBatchedEntriesStopAtTheFirstNodeThatDoesNotPass) {
  PluginRegistry registry;
  registry.LoadLibrary(PluginPath("gcc_plugin.so"), TestApi());
  const PluginEntry* entry = registry.Find("GccPlugin");
  ASSERT_NE(entry, nullptr);
  ASSERT_TRUE(SCHEDHOST_HAS_FIELD(entry->descriptor, schedhost_plugin_descriptor, score_batch));
  ASSERT_NE(entry->descriptor->filter_batch, nullptr);
  ASSERT_NE(entry->descriptor->score_batch, nullptr);
  Instance plugin(entry->descriptor);
  const FakeNode a(LabelMap{{"zone", "a"}}, "a");
  const FakeNode b(LabelMap{{"zone", "b"}, {"disk", "ssd"}}, "b");
  const FakeNode no(LabelMap{{"gcc", "no"}}, "no");
  const FakeNode boom(LabelMap{{"gcc", "throw"}}, "boom");
  const FakePod web("web");

  size_t passed = 99;
  schedhost_status all;
  EXPECT_EQ(plugin.FilterBatch(web, {&a.info, &b.info, &a.info}, passed, all), SCHEDHOST_SUCCESS);
  EXPECT_EQ(passed, 3u);
  EXPECT_TRUE(all.reasons.empty());

  schedhost_status stopped;
  EXPECT_EQ(plugin.FilterBatch(web, {&a.info, &b.info, &no.info, &a.info}, passed, stopped),
            SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(passed, 2u);  // nodes[2] is the one that did not pass; nodes[3] was not looked at
  EXPECT_EQ(stopped.reasons, std::vector<std::string>{"GccPlugin says no to no"});

  schedhost_status first;
  EXPECT_EQ(plugin.FilterBatch(web, {&no.info, &a.info}, passed, first), SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(passed, 0u);

  schedhost_status thrown;
  EXPECT_EQ(plugin.FilterBatch(web, {&a.info, &boom.info, &b.info}, passed, thrown),
            SCHEDHOST_ERROR);
  EXPECT_EQ(passed, 1u);
  EXPECT_EQ(thrown.reasons, std::vector<std::string>{"boom on boom"});

  schedhost_status empty;
  passed = 99;
  EXPECT_EQ(plugin.FilterBatch(web, {}, passed, empty), SCHEDHOST_SUCCESS);
  EXPECT_EQ(passed, 0u);

  // Each node's answer in a batch is the single-node entry's answer.
  std::vector<int64_t> scores;
  schedhost_status scored;
  EXPECT_EQ(plugin.ScoreBatch(web, {&a.info, &b.info, &no.info}, scores, scored),
            SCHEDHOST_SUCCESS);
  EXPECT_EQ(scores, (std::vector<int64_t>{10, 20, 10}));
  for (const FakeNode* n : {&a, &b, &no}) {
    int64_t single = -1;
    EXPECT_EQ(plugin.Score(web, *n, single), SCHEDHOST_SUCCESS);
    EXPECT_EQ(single, 10 * static_cast<int64_t>(n->labels.size()));
  }
  schedhost_status score_thrown;
  EXPECT_EQ(plugin.ScoreBatch(FakePod("throw"), {&a.info}, scores, score_thrown), SCHEDHOST_ERROR);
  EXPECT_EQ(score_thrown.reasons, std::vector<std::string>{"boom from Score"});
}

// A batched call reads each cycle state key from the host once, however many nodes it covers
// (the host does not change the state during Filter and Score); single-node calls read it each
// time. Both see the same value.
TEST(AbiLoaderTest, SdkBatchedEntriesReadACycleStateKeyOncePerBatch) {
  PluginRegistry registry;
  registry.LoadLibrary(PluginPath("gcc_plugin.so"), TestApi());
  const PluginEntry* entry = registry.Find("GccPlugin");
  ASSERT_NE(entry, nullptr);
  Instance plugin(entry->descriptor);
  const FakeNode a(LabelMap{{"zone", "a"}}, "a");
  const FakeNode b(LabelMap{{"zone", "b"}, {"disk", "ssd"}}, "b");
  const FakePod web("web");
  int64_t limit = 1;
  const auto* state = reinterpret_cast<const schedhost_cycle_state*>(&limit);

  g_state_reads = 0;
  size_t passed = 99;
  schedhost_status stopped;
  EXPECT_EQ(plugin.FilterBatch(web, {&a.info, &a.info, &a.info, &b.info}, passed, stopped, state),
            SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(passed, 3u);
  EXPECT_EQ(stopped.reasons, std::vector<std::string>{"GccPlugin: 2 labels, more than 1"});
  EXPECT_EQ(g_state_reads.load(), 1);

  g_state_reads = 0;
  std::vector<int64_t> scores;
  schedhost_status scored;
  EXPECT_EQ(plugin.ScoreBatch(web, {&a.info, &b.info, &a.info}, scores, scored, state),
            SCHEDHOST_SUCCESS);
  EXPECT_EQ(scores, (std::vector<int64_t>{11, 21, 11}));
  EXPECT_EQ(g_state_reads.load(), 1);

  // The next batch reads again: a value is not carried from one call to the next.
  limit = 2;
  g_state_reads = 0;
  schedhost_status all;
  EXPECT_EQ(plugin.FilterBatch(web, {&a.info, &b.info}, passed, all, state), SCHEDHOST_SUCCESS);
  EXPECT_EQ(passed, 2u);
  EXPECT_EQ(g_state_reads.load(), 1);

  // Node by node, every call reads, and sees the limit the batch saw.
  limit = 1;
  g_state_reads = 0;
  schedhost_status single_a, single_b;
  EXPECT_EQ(plugin.Filter(web, a, single_a, state), SCHEDHOST_SUCCESS);
  EXPECT_EQ(plugin.Filter(web, a, single_a, state), SCHEDHOST_SUCCESS);
  EXPECT_EQ(plugin.Filter(web, b, single_b, state), SCHEDHOST_UNSCHEDULABLE);
  EXPECT_EQ(single_b.reasons, std::vector<std::string>{"GccPlugin: 2 labels, more than 1"});
  EXPECT_EQ(g_state_reads.load(), 3);
}

TEST(AbiLoaderTest, ClangLibcxxPluginThrowBecomesErrorStatus) {
  if (!SCHEDHOST_HAVE_CLANG_PLUGIN) GTEST_SKIP() << "clang++-14 with a static libc++ not available";
  PluginRegistry registry;
  const auto lib = registry.LoadLibrary(PluginPath("clang_thrower.so"), TestApi());
  EXPECT_EQ(lib->manifest().compiler.rfind("clang ", 0), 0u) << lib->manifest().compiler;
  const PluginEntry* entry = registry.Find("ClangThrower");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(ImplementedPoints(*entry->descriptor), kFilterBit | kScoreBit);
  Instance plugin(entry->descriptor);
  const FakeNode node(LabelMap{{"zone", "a"}});
  schedhost_status fine, thrown, again;
  EXPECT_EQ(plugin.Filter(FakePod("web"), node, fine), SCHEDHOST_SUCCESS);
  for (int i = 0; i < 3; ++i) {  // the runtime must survive repeated throws
    schedhost_status s;
    EXPECT_EQ(plugin.Filter(FakePod("throw"), node, s), SCHEDHOST_ERROR);
    EXPECT_EQ(s.reasons, std::vector<std::string>{"boom from libc++"});
  }
  // A host-side exception still works after the plugin's libc++ unwound its own.
  EXPECT_THROW(throw std::runtime_error("host"), std::runtime_error);
  int64_t score = 0;
  EXPECT_EQ(plugin.Score(FakePod("web"), node, score), SCHEDHOST_SUCCESS);
  EXPECT_EQ(score, 7);
  EXPECT_EQ(plugin.Filter(FakePod("web"), node, again), SCHEDHOST_SUCCESS);
}

TEST(AbiLoaderTest, LoadDirectoryLoadsTheGoodAndReportsTheBad) {
  PluginRegistry registry;
  registry.LoadDirectory(SCHEDHOST_ABI_PLUGIN_DIR, TestApi());
  std::vector<std::string> want = {"CNodeLabel", "GccPlugin"};
  if (SCHEDHOST_HAVE_CLANG_PLUGIN) want.insert(want.begin() + 1, "ClangThrower");
  EXPECT_EQ(registry.Names(), want);
  std::vector<std::string> refused_files;
  for (const std::string& e : registry.load_errors()) {
    refused_files.push_back(fs::path(e.substr(0, e.find(".so") + 3)).filename().string());
  }
  std::vector<std::string> want_refused = {"bad_abi2.so",           "bad_gnu_unique.so",
                                           "bad_min_host_minor.so", "bad_negotiation.so",
                                           "bad_no_entry.so",       "bad_undefined.so"};
  if (!SCHEDHOST_HAVE_UNIQUE_LIB) want_refused.erase(want_refused.begin() + 1);
  EXPECT_EQ(refused_files, want_refused);
  EXPECT_EQ(std::getenv(kConstructorMarker), nullptr) << "a refused library's code ran";

  try {
    registry.LoadDirectory("/nonexistent/plugins", TestApi());
    ADD_FAILURE() << "a missing directory was accepted";
  } catch (const LoadError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/plugins: not a directory (No such file or directory)");
  }
}

std::vector<const char*> GoodPlugins() {
  std::vector<const char*> out = {"c99_plugin.so", "gcc_plugin.so"};
  if (SCHEDHOST_HAVE_CLANG_PLUGIN) out.push_back("clang_thrower.so");
  return out;
}

// --- refusals -----------------------------------------------------------------------------------

struct Refusal {
  std::string name;
  fs::path path;
  std::vector<std::string> parts;
};

std::vector<char> ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<char> ForeignElfHeader() {
  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
#if defined(__x86_64__)
  h.e_machine = EM_AARCH64;
#else
  h.e_machine = EM_X86_64;
#endif
  h.e_version = EV_CURRENT;
  h.e_ehsize = sizeof h;
  std::vector<char> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

TEST(AbiLoaderTest, RefusesBadLibrariesWithSpecificMessagesAndChangesNothing) {
  ASSERT_EQ(unsetenv(kConstructorMarker), 0);
  TempDir tmp;
  std::vector<char> truncated = ReadAll(PluginPath("c99_plugin.so"));
  ASSERT_GT(truncated.size(), 100u);
  truncated.resize(100);
  const std::string text = "this is not a library\n";
  Dl_info libm{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(static_cast<double (*)(double)>(&std::cos)), &libm), 0);
#if defined(__x86_64__)
  const std::string foreign = "built for aarch64, this host is x86_64";
#else
  const std::string foreign = "built for x86_64, this host is aarch64";
#endif

  std::vector<Refusal> cases = {
      {"future major",
       PluginPath("bad_abi2.so"),
       {"bad_abi2.so was built for plugin ABI 2.0; this host speaks " + kAbi +
        " — rebuild against schedhost-sdk 1.x"}},
      {"newer minor",
       PluginPath("bad_min_host_minor.so"),
       {"bad_min_host_minor.so needs host ABI 1.99 or newer; this host speaks " + kAbi +
        " — upgrade schedhost or rebuild the plugin against an older schedhost-sdk"}},
      {"no entry",
       PluginPath("bad_no_entry.so"),
       {"bad_no_entry.so: does not export the entry function schedhost_plugin_library_v1"}},
      {"truncated",
       tmp.Write("truncated.so", truncated),
       {"truncated.so: truncated: section header table at offset ", "beyond file size 100"}},
      {"text",
       tmp.Write("notes.so", std::vector<char>(text.begin(), text.end())),
       {"notes.so: not an ELF file (bad magic)"}},
      {"other machine", tmp.Write("foreign.so", ForeignElfHeader()), {"foreign.so: " + foreign}},
      {"unresolved symbol",
       PluginPath("bad_undefined.so"),
       {"bad_undefined.so: dlopen failed: undefined symbol: schedhost_symbol_no_host_has"}},
      {"not a plugin",
       libm.dli_fname,
       {"not a schedhost plugin library (no schedhost_manifest section)"}},
  };
  if (SCHEDHOST_HAVE_UNIQUE_LIB) {
    cases.push_back({"gnu unique",
                     PluginPath("bad_gnu_unique.so"),
                     {"bad_gnu_unique.so: defines GNU_UNIQUE symbols",
                      "CallCount<int>()::count (_ZZ9CallCountIiERivE5count)",
                      "build it with -fno-gnu-unique or hidden visibility"}});
  }
  PluginRegistry registry;
  registry.LoadLibrary(PluginPath("gcc_plugin.so"), TestApi());
  for (const Refusal& c : cases) {
    const std::string error = LoadFailure(registry, c.path);
    EXPECT_EQ(error.find(fs::absolute(c.path).string()), 0u)
        << c.name << ": the message must start with the file: " << error;
    for (const std::string& part : c.parts) {
      EXPECT_NE(error.find(part), std::string::npos)
          << c.name << ":\n  got:    " << error << "\n  wanted: " << part;
    }
    EXPECT_EQ(registry.Names(), std::vector<std::string>{"GccPlugin"}) << c.name;
    EXPECT_EQ(registry.Libraries().size(), 1u) << c.name;
    if (c.name != "not a plugin") {
      EXPECT_FALSE(PluginRegistry::IsLoaded(c.path)) << c.name << " was dlopened";
    }
  }
  EXPECT_EQ(std::getenv(kConstructorMarker), nullptr)
      << "code of a refused library ran: " << std::getenv(kConstructorMarker);
}

TEST(AbiLoaderTest, RefusesDuplicatePluginNamesAcrossLibraries) {
  TempDir tmp;
  const fs::path original = PluginPath("c99_plugin.so");
  const fs::path copy = tmp.Write("copy_of_c99.so", ReadAll(original));
  PluginRegistry registry;
  const auto lib = registry.LoadLibrary(original, TestApi());
  EXPECT_EQ(LoadFailure(registry, copy),
            "plugin CNodeLabel is provided by both " + original.string() + " and " + copy.string());
  EXPECT_EQ(registry.Find("CNodeLabel")->library, lib);
  EXPECT_EQ(registry.Libraries().size(), 1u);
  EXPECT_FALSE(PluginRegistry::IsLoaded(copy)) << "the refused copy stayed mapped";
  EXPECT_EQ(LoadFailure(registry, original), original.string() + " is already loaded");
}

TEST(AbiLoaderTest, QuotesTheLibrarysOwnRefusal) {
  PluginRegistry registry;
  schedhost_host_api no_intern = *TestApi();
  no_intern.intern = nullptr;  // CNodeLabel needs it
  EXPECT_EQ(LoadFailure(registry, PluginPath("c99_plugin.so"), &no_intern),
            PluginPath("c99_plugin.so").string() +
                ": the library refused this host (ABI " + kAbi + ", code 1): \"CNodeLabel needs "
                "status_add_reason and intern from the host\"");
  // The C++ SDK refuses a missing host table.
  const std::string error = LoadFailure(registry, PluginPath("gcc_plugin.so"), nullptr);
  EXPECT_NE(error.find("the library refused this host"), std::string::npos) << error;
  EXPECT_NE(error.find("\"host API table is missing or too small\""), std::string::npos) << error;
  EXPECT_TRUE(registry.Names().empty());
  EXPECT_FALSE(PluginRegistry::IsLoaded(PluginPath("c99_plugin.so")));
  EXPECT_FALSE(PluginRegistry::IsLoaded(PluginPath("gcc_plugin.so")));
}

// Every check the loader makes after dlopen, driven through one library whose reply depends on
// the host version string; each refusal must also close the library again.
TEST(AbiLoaderTest, ChecksTheNegotiationReply) {
  const fs::path path = PluginPath("bad_negotiation.so");
  const std::string file = path.string();
  const size_t small = offsetof(schedhost_plugin_descriptor, post_bind);
  const std::pair<const char*, std::string> cases[] = {
      {"reply-minor", file + ": negotiation says ABI 1." +
                          std::to_string(SCHEDHOST_ABI_MINOR + 1) +
                          " (min host minor 0) but the manifest says ABI " + kAbi +
                          " (min host minor 0) — the library is inconsistent; rebuild it"},
      {"reply-min-host",
       file + ": negotiation says ABI " + kAbi + " (min host minor 1) but the manifest says ABI " +
           kAbi + " (min host minor 0)"},
      {"reply-major", file + ": negotiation says ABI 2." + std::to_string(SCHEDHOST_ABI_MINOR) +
                          " (min host minor 0)"},
      {"no-plugins", file + ": the library provides no plugins"},
      {"null-table", file + ": negotiation returned 1 plugins in a NULL table"},
      {"duplicate", file + ": plugin name Negotiator appears twice in the library"},
      {"small", file + ": plugin #1 has a descriptor of struct_size " + std::to_string(small) +
                    ", smaller than the ABI 1.0 descriptor (" +
                    std::to_string(offsetof(schedhost_plugin_descriptor, post_bind) +
                                   sizeof(void*)) +
                    " bytes) — rebuild it against schedhost-sdk 1.x"},
      {"unnamed", file + ": plugin #0 has an empty name"},
      {"spaced", file + ": plugin #0 has a name with spaces or control characters: 'Two Words'"},
      {"null-entry", file + ": plugin #1 has a NULL descriptor"},
      {"anything else", file + ": the library refused this host (ABI " + kAbi + ", code 3): "
                               "\"bad_negotiation only talks to its test scenarios\""},
  };
  for (const auto& [scenario, error] : cases) {
    PluginRegistry registry(scenario);
    const std::string got = LoadFailure(registry, path);
    EXPECT_EQ(got.find(error), 0u) << scenario << ":\n  got:    " << got << "\n  wanted: " << error;
    EXPECT_TRUE(registry.Names().empty()) << scenario;
    EXPECT_TRUE(registry.Libraries().empty()) << scenario;
    EXPECT_FALSE(PluginRegistry::IsLoaded(path)) << scenario << ": left loaded after refusal";
  }
  PluginRegistry registry("good");
  const auto lib = registry.LoadLibrary(path, TestApi());
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"Negotiator"});
  EXPECT_EQ(ImplementedPoints(*lib->descriptors()[0]), 0u);
}

// Filter runs concurrently across nodes (docs/abi.md rule 9); under the tsan preset this checks the
// SDK's exception path and the plugins' read-only instance state.
TEST(AbiLoaderTest, ParallelFilterCalls) {
  PluginRegistry registry;
  for (const char* file : GoodPlugins()) registry.LoadLibrary(PluginPath(file), TestApi());
  std::vector<std::pair<std::string, std::unique_ptr<Instance>>> plugins;
  for (const std::string& name : registry.Names()) {
    plugins.emplace_back(name, std::make_unique<Instance>(registry.Find(name)->descriptor));
  }
  const FakeNode node(LabelMap{{"c99", "yes"}});
  const FakePod throws("throw"), fine("web");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const FakePod& pod = (i + t) % 2 ? throws : fine;
        for (const auto& [name, plugin] : plugins) {
          schedhost_status status;
          const int32_t want =
              (name != "CNodeLabel" && &pod == &throws) ? SCHEDHOST_ERROR : SCHEDHOST_SUCCESS;
          if (plugin->Filter(pod, node, status) != want) ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// --- unloading ----------------------------------------------------------------------------------

TEST(AbiLoaderTest, LibraryIsClosedWhenTheLastReferenceGoes) {
  for (const char* file : GoodPlugins()) {
    const fs::path path = PluginPath(file);
    PluginRegistry registry;
    std::shared_ptr<const Library> lib = registry.LoadLibrary(path, TestApi());
    EXPECT_TRUE(PluginRegistry::IsLoaded(path)) << file;
    PluginEntry kept = *registry.Find(registry.Names().at(0));  // e.g. a framework's plugin
    EXPECT_TRUE(registry.Unload(*lib));
    EXPECT_FALSE(registry.Unload(*lib));
    EXPECT_TRUE(registry.Names().empty());
    EXPECT_TRUE(registry.Libraries().empty());
    {
      // Still callable through the kept reference.
      Instance plugin(kept.descriptor);
      schedhost_status status;
      EXPECT_NE(plugin.Filter(FakePod("web"), FakeNode(LabelMap{{"c99", "yes"}}), status),
                SCHEDHOST_ERROR);
    }
    EXPECT_TRUE(PluginRegistry::IsLoaded(path)) << file << " closed while still referenced";
    kept.library.reset();
    EXPECT_TRUE(PluginRegistry::IsLoaded(path)) << file;  // `lib` still holds it
    lib.reset();
    EXPECT_FALSE(PluginRegistry::IsLoaded(path)) << file << " could not be unloaded";
  }
}

// Repeated load / call / unload: under the asan preset this finds leaks and use-after-unload.
TEST(AbiLoaderTest, LoadUnloadLoop) {
  for (int i = 0; i < 20; ++i) {
    PluginRegistry registry;
    for (const char* file : GoodPlugins()) registry.LoadLibrary(PluginPath(file), TestApi());
    for (const std::string& name : registry.Names()) {
      Instance plugin(registry.Find(name)->descriptor);
      schedhost_status status;
      plugin.Filter(FakePod("throw"), FakeNode(), status);
    }
  }
  for (const char* file : GoodPlugins()) EXPECT_FALSE(PluginRegistry::IsLoaded(PluginPath(file)));
}

}  // namespace
}  // namespace schedhost::loader
