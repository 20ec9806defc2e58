// A line written to a file descriptor with one write(2): launchers merge the ranks' output as
// it comes, and a line that stdio writes in pieces can be cut by another rank's (Open MPI 5's
// launcher did). Lines longer than the buffer are cut at its end.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdio>

namespace tsmpi {

__attribute__((format(printf, 2, 3))) inline void write_formatted(int fd, const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) (void)!::write(fd, line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
}

}  // namespace tsmpi
