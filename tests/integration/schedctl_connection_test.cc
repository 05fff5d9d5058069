// schedctl's connection: the server from the environment or the flag, a clear error naming the
// address (quickly) when nothing answers, and TLS over TCP with a CA made by openssl.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "schedctl_fixture.h"

namespace schedhost::testing {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(SchedctlTest, ServerComesFromTheEnvironmentWhenNoFlagIsGiven) {
  Result r = RunSchedctl(dir_, {"get", "nodes"}, server_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "No resources found.\n");
  // The flag wins over the environment, and may follow the subcommand.
  Result flag_wins =
      RunSchedctl(dir_, {"get", "nodes", "--server", server_}, "unix:///nonexistent/x.sock");
  EXPECT_EQ(flag_wins.exit_code, 0) << flag_wins.err;
}

TEST(SchedctlNoServerTest, NamesTheAddressAndExitsOneQuickly) {
  if (!fs::exists(BinDir() / "schedctl")) GTEST_SKIP() << "schedctl is not built";
  TempDir dir;
  const std::string address = "unix://" + (dir.path() / "absent.sock").string();
  Result r = RunSchedctl(dir, {"--server", address, "get", "pods"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot connect to schedhostd at " + address));
  EXPECT_LT(r.seconds, 6);

  // TCP always means TLS; a port nobody listens on fails the same way.
  Result tcp = RunSchedctl(dir, {"--server", "127.0.0.1:1", "stats"});
  EXPECT_EQ(tcp.exit_code, 1);
  EXPECT_THAT(tcp.err, HasSubstr("cannot connect to schedhostd at 127.0.0.1:1"));
  EXPECT_LT(tcp.seconds, 6);
  Result half = RunSchedctl(dir, {"--server", "127.0.0.1:1", "--tls-cert", "c.pem", "get", "pods"});
  EXPECT_EQ(half.exit_code, 1);
  EXPECT_THAT(half.err, HasSubstr("--tls-cert and --tls-key go together"));
  Result unix_tls = RunSchedctl(dir, {"--server", address, "--tls-ca", "ca.pem", "get", "pods"});
  EXPECT_EQ(unix_tls.exit_code, 1);
  EXPECT_THAT(unix_tls.err, HasSubstr("a unix socket is served without TLS"));

  // Decoding comes first: a bad file is refused without a server.
  Result missing = RunSchedctl(dir, {"--server", address, "apply", "-f", "/nonexistent.yaml"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent.yaml"));
}

// Over TCP schedctl speaks TLS: it trusts the server through --tls-ca, and a server its CA did
// not sign is refused.
TEST(SchedctlTlsTest, ConnectsOverTcpWithTheGivenCa) {
  if (!fs::exists(BinDir() / "schedctl") || !fs::exists(BinDir() / "schedhostd")) {
    GTEST_SKIP() << "schedctl and schedhostd are not built";
  }
  if (!fs::exists("/usr/bin/openssl")) GTEST_SKIP() << "openssl is needed to make certificates";
  TempDir dir;
  const fs::path& d = dir.path();
  std::ofstream(d / "san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  const std::string openssl = "cd " + d.string() + " && /usr/bin/openssl ";
  for (const std::string& cmd :
       {openssl + "req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 "
                  "-subj /CN=schedctl-test-ca",
        openssl + "req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 1 "
                  "-subj /CN=someone-else",
        openssl + "req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
                  "-subj /CN=localhost",
        openssl + "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                  "-out server.pem -days 1 -extfile san.ext"}) {
    ASSERT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
  }
  const int port = FreePort();
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::ofstream(d / "schedhost.toml")
      << "[host]\nstate_dir = \"state\"\n[api]\nlisten = \"" << address << "\"\n"
      << "[api.tls]\ncert = \"" << (d / "server.pem").string() << "\"\nkey = \""
      << (d / "server.key").string() << "\"\n[metrics]\nlisten = \"127.0.0.1:0\"\n";
  const pid_t pid = StartSchedhostd(d / "schedhost.toml");
  ASSERT_GT(pid, 0);
  const std::string ca = (d / "ca.pem").string();
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    r = RunSchedctl(dir, {"--server", address, "--tls-ca", ca, "get", "nodes"});
  } while (r.exit_code != 0 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "No resources found.\n");

  Result untrusted = RunSchedctl(
      dir, {"--server", address, "--tls-ca", (d / "other.pem").string(), "get", "nodes"});
  EXPECT_EQ(untrusted.exit_code, 1);
  EXPECT_THAT(untrusted.err, HasSubstr("cannot connect to schedhostd at " + address));
  StopSchedhostd(pid);
}

}  // namespace
}  // namespace schedhost::testing
