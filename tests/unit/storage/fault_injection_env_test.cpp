#include "runtime/storage/fault_injection_env.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/mmap_region.hpp"
#include "runtime/storage/segment.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

bytes_view text(std::string_view s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::string contents(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A new file `name` in `dir` holding `content`, written through the installed env.
file_handle new_file(const temp_dir& dir, const std::string& name, std::string_view content) {
  auto f = file_handle::open(dir / name, file_mode::create_new);
  REQUIRE(f);
  REQUIRE(f->pwrite_all(text(content), 0));
  return std::move(*f);
}

} // namespace

TEST_CASE("the process uses the POSIX env unless a test installs another", "[storage][env]") {
  CHECK(&storage_env::current() == &storage_env::posix());
  fault_injection_env faults;
  {
    scoped_storage_env installed(faults);
    CHECK(&storage_env::current() == &faults);
  }
  CHECK(&storage_env::current() == &storage_env::posix());
}

TEST_CASE("a failing write rule fails writes to matching paths only, and leaves the file as it was",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto a = new_file(dir, "a-0.log", "before");
  auto b = new_file(dir, "b-0.log", "");
  faults.fail("a-0", storage_op::write, EIO);

  auto failed = a.pwrite_all(text("after!"), 0);
  REQUIRE_FALSE(failed);
  CHECK(failed.err().code == errc::kafka_storage_error);
  CHECK(failed.err().message.find("a-0.log") != std::string::npos);
  CHECK(failed.err().message.find("Input/output error") != std::string::npos);
  CHECK(contents(dir / "a-0.log") == "before");
  CHECK(a.sync());
  CHECK(b.pwrite_all(text("fine"), 0));
  CHECK(contents(dir / "b-0.log") == "fine");
  CHECK(faults.injected() == 1);

  faults.clear();
  CHECK(a.pwrite_all(text("again!"), 0));
  CHECK(contents(dir / "a-0.log") == "again!");
}

TEST_CASE("each operation can be failed with the errno a full or broken disk gives",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto f = file_handle::open(dir / "p-0.log", file_mode::create_new);
  REQUIRE(f);
  REQUIRE(f->pwrite_all(text("data"), 0));
  faults.fail("p-0", storage_op::sync, ENOSPC);
  faults.fail("p-0", storage_op::truncate, EIO);
  faults.fail("p-0", storage_op::rename, EIO);
  faults.fail("p-0", storage_op::remove, EIO);
  faults.fail("q-0", storage_op::open, ENOSPC);

  auto synced = f->sync();
  REQUIRE_FALSE(synced);
  CHECK(synced.err().message.find("No space left on device") != std::string::npos);
  CHECK_FALSE(f->truncate(0));
  CHECK_FALSE(rename_file(dir / "p-0.log", dir / "p-0.old"));
  CHECK_FALSE(remove_file(dir / "p-0.log"));
  CHECK(contents(dir / "p-0.log") == "data");
  auto opened = file_handle::open(dir / "q-0.log", file_mode::create_new);
  REQUIRE_FALSE(opened);
  CHECK(opened.err().code == errc::kafka_storage_error);
  CHECK_FALSE(std::filesystem::exists(dir / "q-0.log"));
  CHECK(faults.injected() == 5);
}

TEST_CASE("a full disk fails writes, fsyncs, creations and mkdirs under its path with ENOSPC, "
          "lets reads, truncation and removal go on, and clearing its path ends it alone",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  REQUIRE(make_directories(dir / "full"));
  auto f = new_file(dir, "full/p-0.log", "data");
  auto other = new_file(dir, "o-0.log", "");
  const auto full = (dir / "full").string();
  faults.fill_disk(full, ENOSPC);
  faults.fail("o-0", storage_op::sync, EIO);

  auto written = f.pwrite_all(text("more"), 4);
  REQUIRE_FALSE(written);
  CHECK(written.err().message.find("No space left on device") != std::string::npos);
  CHECK_FALSE(f.sync());
  CHECK_FALSE(file_handle::open(dir / "full/q-0.log", file_mode::create_new));
  CHECK_FALSE(file_handle::open(dir / "full/p-0.log", file_mode::open_or_create));
  CHECK_FALSE(make_directories(dir / "full/t-0"));
  CHECK(file_handle::open(dir / "full/p-0.log", file_mode::open_existing));
  std::array<uint8_t, 1> byte{};
  CHECK(f.pread_all(byte, 0));
  CHECK(byte[0] == 'd');
  CHECK(f.truncate(3));
  CHECK(remove_file(dir / "full/p-0.log"));
  CHECK(other.pwrite_all(text("fine"), 0));

  faults.clear(full);
  CHECK(file_handle::open(dir / "full/q-0.log", file_mode::create_new));
  CHECK(make_directories(dir / "full/t-0"));
  CHECK_FALSE(other.sync());
}

TEST_CASE("a stalled fsync blocks its caller until the test releases it, then runs",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto f = file_handle::open(dir / "slow-0.log", file_mode::create_new);
  auto other = file_handle::open(dir / "fast-0.log", file_mode::create_new);
  REQUIRE(f);
  REQUIRE(other);
  faults.stall("slow-0", storage_op::sync);

  std::atomic<bool> done{false};
  auto synced = std::async(std::launch::async, [&] {
    auto s = f->sync();
    done = true;
    return s.ok();
  });
  REQUIRE(faults.wait_stalled(1, 10s));
  CHECK_FALSE(done);
  // Other files are not held up by the stall.
  CHECK(other->sync());

  faults.release();
  REQUIRE(synced.wait_for(10s) == std::future_status::ready);
  CHECK(synced.get());
  CHECK(faults.stalled() == 0);
  // The stall rule is gone: the next fsync goes straight through.
  CHECK(f->sync());
}

TEST_CASE("destroying the env lets a stalled call go on", "[storage][env]") {
  temp_dir dir;
  auto f = file_handle::open(dir / "slow-0.log", file_mode::create_new);
  REQUIRE(f);
  std::future<bool> synced;
  {
    fault_injection_env faults;
    scoped_storage_env installed(faults);
    faults.stall("slow-0", storage_op::sync);
    synced = std::async(std::launch::async, [&] { return f->sync().ok(); });
    REQUIRE(faults.wait_stalled(1, 10s));
  }
  REQUIRE(synced.wait_for(10s) == std::future_status::ready);
  CHECK(synced.get());
}

TEST_CASE("a segment whose log write fails keeps its offsets and its bytes", "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto seg = segment::open(dir.path(), offset{0}, segment_open_mode::create, {});
  REQUIRE(seg);
  REQUIRE((*seg)->append(make_batch(2, "a", 1000)));
  const auto size = (*seg)->size_bytes();
  faults.fail(".log", storage_op::write, EIO);
  auto batch = make_batch(2, "b", 1000);
  set_base_offset(batch, offset{2});
  auto s = (*seg)->append(batch);
  REQUIRE_FALSE(s);
  CHECK(s.err().code == errc::kafka_storage_error);
  CHECK((*seg)->next_offset() == offset{2});
  CHECK((*seg)->size_bytes() == size);
  CHECK(std::filesystem::file_size(dir / "00000000000000000000.log") == size);
}

// Before: directories were made and removed by std::filesystem, out of the env's reach, so no
// test could fail a partition's mkdir or a deleted partition's removal.
TEST_CASE("directories are made and removed through the env, which can fail them",
          "[storage][env]") {
  namespace fs = std::filesystem;
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);

  REQUIRE(make_directories(dir.path() / "a" / "b"));
  CHECK(fs::is_directory(dir.path() / "a" / "b"));
  REQUIRE(make_directories(dir.path() / "a" / "b"));

  faults.fail("/full", storage_op::mkdir, ENOSPC);
  auto refused = make_directories(dir.path() / "full" / "deeper");
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::kafka_storage_error);
  CHECK(refused.err().message.find("mkdir") != std::string::npos);
  CHECK(refused.err().message.find("No space left on device") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() / "full"));

  // A tree with files, a nested directory and a link out of it; the link's target survives.
  const auto outside = dir.path() / "outside.txt";
  std::ofstream(outside) << "kept";
  std::ofstream(dir.path() / "a" / "one.txt") << "1";
  std::ofstream(dir.path() / "a" / "b" / "two.txt") << "2";
  fs::create_symlink(outside, dir.path() / "a" / "b" / "link");
  faults.fail("/a/b", storage_op::rmdir, EIO);
  auto stuck = remove_tree(dir.path() / "a");
  REQUIRE_FALSE(stuck);
  CHECK(stuck.err().message.find("rmdir") != std::string::npos);
  CHECK(fs::is_directory(dir.path() / "a" / "b"));
  CHECK(fs::is_empty(dir.path() / "a" / "b"));

  faults.clear();
  REQUIRE(remove_tree(dir.path() / "a"));
  CHECK_FALSE(fs::exists(dir.path() / "a"));
  CHECK(contents(outside) == "kept");
  REQUIRE(remove_tree(dir.path() / "a"));
  CHECK(faults.injected() == 2);
}

TEST_CASE("a failing read rule fails preads of matching paths with its errno", "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto a = new_file(dir, "a-0.log", "stored");
  auto b = new_file(dir, "b-0.log", "stored");
  faults.fail("a-0", storage_op::read, EIO);

  std::array<uint8_t, 6> out{};
  auto failed = a.pread_all(out, 0);
  REQUIRE_FALSE(failed);
  CHECK(failed.code() == errc::kafka_storage_error);
  CHECK(failed.err().message.find("pread") != std::string::npos);
  CHECK(failed.err().message.find("Input/output error") != std::string::npos);
  REQUIRE(b.pread_all(out, 0));
  CHECK(std::string(out.begin(), out.end()) == "stored");
  CHECK(faults.injected() == 1);
}

TEST_CASE("a flip rule flips the bits of one byte in every read that covers it, never on disk",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto f = new_file(dir, "p-0.log", "abcdef");
  faults.flip("p-0", 2, 0x20);

  std::array<uint8_t, 6> whole{};
  REQUIRE(f.pread_all(whole, 0));
  CHECK(std::string(whole.begin(), whole.end()) == "abCdef");
  std::array<uint8_t, 2> before{}, covering{};
  REQUIRE(f.pread_all(before, 0));
  CHECK(std::string(before.begin(), before.end()) == "ab");
  REQUIRE(f.pread_all(covering, 1));
  CHECK(std::string(covering.begin(), covering.end()) == "bC");
  CHECK(faults.injected() == 2);
  CHECK(contents(dir / "p-0.log") == "abcdef");

  faults.clear();
  REQUIRE(f.pread_all(whole, 0));
  CHECK(std::string(whole.begin(), whole.end()) == "abcdef");
}

TEST_CASE("a file the env will not map is read into memory through the env, or left to pread",
          "[storage][env]") {
  temp_dir dir;
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  auto f = new_file(dir, "p-0.log", "abcdefghij");

  auto mapped = mmap_region::try_map(f, 10);
  REQUIRE(mapped);
  REQUIRE(*mapped);
  CHECK(std::string((*mapped)->bytes().begin(), (*mapped)->bytes().end()) == "abcdefghij");

  faults.fail("p-0", storage_op::map, ENODEV);
  faults.flip("p-0", 9, 0x20);
  auto declined = mmap_region::try_map(f, 10);
  REQUIRE(declined);
  CHECK_FALSE(*declined);
  auto read = mmap_region::map(f, 10);
  REQUIRE(read);
  REQUIRE(*read);
  CHECK(reinterpret_cast<uintptr_t>((*read)->data()) % 8 == 0);
  CHECK(std::string((*read)->bytes().begin(), (*read)->bytes().end()) == "abcdefghiJ");

  faults.fail("p-0", storage_op::read, EIO);
  CHECK(mmap_region::map(f, 10).code() == errc::kafka_storage_error);
  faults.clear();
  faults.fail("p-0", storage_op::map, ENOMEM);
  CHECK(mmap_region::try_map(f, 10).code() == errc::kafka_storage_error);
}
