#include "app/client/prompt.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "app/client/file_util.h"

namespace kairos::client {

namespace {

void WriteFd(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Reads up to a '\n' from `fd` (echo off on a terminal when `secret`). nullopt at end of input
// before any character.
std::optional<std::string> ReadLineFd(int fd, bool secret) {
  termios saved{};
  const bool tty = ::isatty(fd) == 1;
  const bool hide = tty && secret && ::tcgetattr(fd, &saved) == 0;
  if (hide) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;
    ::tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  std::string line;
  bool any = false;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    any = true;
    if (c == '\n') break;
    line.push_back(c);
  }
  if (hide) ::tcsetattr(fd, TCSAFLUSH, &saved);
  if (!any) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

class Tty {
 public:
  Tty() : fd_(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)) {}
  ~Tty() {
    if (fd_ >= 0) ::close(fd_);
  }
  Tty(const Tty&) = delete;
  Tty& operator=(const Tty&) = delete;
  bool ok() const { return fd_ >= 0; }
  std::optional<std::string> Ask(std::string_view prompt, bool secret) {
    WriteFd(fd_, prompt);
    return ReadLineFd(fd_, secret);
  }

 private:
  int fd_;
};

}  // namespace

Result<std::string> GetPassphrase(const std::string& passphrase_file, std::string_view prompt,
                                  bool confirm) {
  if (!passphrase_file.empty()) {
    Result<std::string> text = ReadWholeFile(passphrase_file);
    if (!text.ok()) {
      return Status::InvalidArgument("cannot read the passphrase file: " + text.status().message());
    }
    std::string line = text->substr(0, text->find('\n'));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      return Status::InvalidArgument("the passphrase file " + passphrase_file + " is empty");
    }
    return line;
  }
  if (const char* env = std::getenv(kPassphraseEnv); env != nullptr && *env != '\0') {
    return std::string(env);
  }
  Tty tty;
  if (!tty.ok()) {
    return Status::InvalidArgument(std::string("no passphrase: set ") + kPassphraseEnv +
                                   ", pass --passphrase-file, or run on a terminal");
  }
  std::optional<std::string> first = tty.Ask(prompt, /*secret=*/true);
  if (!first || first->empty()) return Status::InvalidArgument("no passphrase entered");
  if (confirm) {
    std::optional<std::string> again = tty.Ask("Repeat the passphrase: ", /*secret=*/true);
    if (!again || *again != *first) return Status::InvalidArgument("the passphrases differ");
  }
  return *first;
}

Result<std::string> ReadStdinLine(std::string_view prompt, bool secret) {
  if (::isatty(STDIN_FILENO) == 1) WriteFd(STDERR_FILENO, prompt);
  std::optional<std::string> line = ReadLineFd(STDIN_FILENO, secret);
  if (!line) return Status::InvalidArgument("no input on stdin");
  return *line;
}

Result<bool> AskYesNo(std::string_view question) {
  Tty tty;
  if (!tty.ok()) return Status::InvalidArgument("no terminal to confirm on");
  std::optional<std::string> answer = tty.Ask(std::string(question) + " [y/N] ", false);
  return answer && (*answer == "y" || *answer == "Y" || *answer == "yes");
}

}  // namespace kairos::client
