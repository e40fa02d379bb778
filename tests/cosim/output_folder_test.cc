// OutputFolder (tools/cosim/output/output_folder.h) and its rules (output_folder_rules.h): a run's
// files replace the old run's, as one unit where the folder holds only nbox's files; a folder
// that is not the run's to replace is refused; nothing nbox did not write is ever moved or
// deleted; a commit that fails at any step leaves the folder as it was.
#include "tools/cosim/output/output_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nbox::cosim {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

ino_t Inode(const fs::path& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// Every entry below `folder`: its path, its inode and a file's content.
std::map<std::string, std::pair<ino_t, std::string>> Snapshot(const fs::path& folder) {
  std::map<std::string, std::pair<ino_t, std::string>> entries;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const bool file = fs::symlink_status(entry.path()).type() == fs::file_type::regular;
    entries[fs::relative(entry.path(), folder).string()] = {Inode(entry.path()),
                                                            file ? Read(entry.path()) : ""};
  }
  return entries;
}

class OutputFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() /
              ("nbox-output-folder-" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(parent_);
    fs::create_directories(parent_);
    target_ = parent_ / "run";
  }
  void TearDown() override { fs::remove_all(parent_); }

  // Entries of the parent folder: only the target may be there once a run is over.
  int EntriesBeside() const {
    return static_cast<int>(std::distance(fs::directory_iterator(parent_), {}));
  }

  fs::path parent_;
  fs::path target_;
};

TEST_F(OutputFolderTest, AFirstRunCreatesTheFolderWhole) {
  {
    OutputFolder out(target_.string());
    out.Write("results.json", "new");
    EXPECT_FALSE(fs::exists(target_)) << "visible before the run is complete";
    out.Commit();
  }
  EXPECT_EQ(Read(target_ / "results.json"), "new");
  EXPECT_EQ(EntriesBeside(), 1);
}

TEST_F(OutputFolderTest, ANewRunReplacesTheOldRunsFilesAndKeepsTheSweepsCompanions) {
  fs::create_directories(target_);
  Write(target_ / "results.json", "old");
  Write(target_ / "links.csv", "old samples");  // the old run sampled links, the new does not
  Write(target_ / "rank3.log", "old log");
  Write(target_ / "cosim.out", "sweep's copy of the terminal");
  Write(target_ / "ports.png", "png");
  const ino_t before = Inode(target_ / "cosim.out");
  // A writer that opened cosim.out before the swap (nbox-sweep's redirect) keeps its file.
  std::ofstream writer(target_ / "cosim.out", std::ios::app);
  {
    OutputFolder out(target_.string());
    out.Write("results.json", "new");
    EXPECT_EQ(Read(target_ / "results.json"), "old") << "the old set until the commit";
    out.Commit();
  }
  writer << ", and more" << std::flush;
  EXPECT_EQ(Read(target_ / "results.json"), "new");
  EXPECT_FALSE(fs::exists(target_ / "links.csv"));
  EXPECT_FALSE(fs::exists(target_ / "rank3.log"));
  EXPECT_EQ(Read(target_ / "cosim.out"), "sweep's copy of the terminal, and more");
  EXPECT_EQ(Inode(target_ / "cosim.out"), before);
  EXPECT_EQ(Read(target_ / "ports.png"), "png");
  EXPECT_EQ(EntriesBeside(), 1);
}

TEST_F(OutputFolderTest, AFolderHoldingWhatNboxDidNotWriteIsRefusedUnlessForced) {
  fs::create_directories(target_ / "data");
  Write(target_ / "data" / "big.bin", "a user's data");
  Write(target_ / "notes.txt", "mine");
  Write(target_ / "results.json", "old");
  Write(target_ / "trace.json", "old trace");  // the new run writes none
  const auto before = Snapshot(target_);
  try {
    OutputFolder refused(target_.string());
    ADD_FAILURE() << "accepted a folder holding notes.txt and data/";
  } catch (const OutputFolderRefusal& e) {
    EXPECT_NE(std::string(e.what()).find("it holds data and 1 more entries that nbox did not "
                                         "write"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Snapshot(target_), before);
  EXPECT_EQ(EntriesBeside(), 1);
  {
    OutputFolder out(target_.string(), /*force=*/true);
    out.Write("results.json", "new");
    out.Commit();
  }
  EXPECT_EQ(Read(target_ / "results.json"), "new");
  EXPECT_FALSE(fs::exists(target_ / "trace.json")) << "the old run's file outlived it";
  for (const char* kept : {"notes.txt", "data", "data/big.bin"}) {
    EXPECT_EQ(Snapshot(target_)[kept], before.at(kept)) << kept << " was moved or changed";
  }
  EXPECT_EQ(EntriesBeside(), 1);
}

// "--out ." in a folder of the user's, "--out ..", the root and the home folder: refused with
// or without --force, before anything is created, and nothing in them changes.
TEST_F(OutputFolderTest, TheCurrentFolderAndAboveTheRootAndHomeAreNeverRunFolders) {
  const fs::path work = parent_ / "work";
  for (int i = 0; i < 10; ++i) fs::create_directories(work / ("project" + std::to_string(i)));
  fs::create_directories(work / "project0" / "child");
  const auto before = Snapshot(parent_);
  const fs::path cwd = fs::current_path();
  const char* home = std::getenv("HOME");
  const std::string saved_home = home != nullptr ? home : "";
  setenv("HOME", (work / "project3").c_str(), 1);
  fs::current_path(work / "project0" / "child");
  for (const std::string& path : std::vector<std::string>{".", "..", "../..", "./", "../child/..",
                                                          "/", (work / "project3").string()}) {
    for (bool force : {false, true}) {
      EXPECT_THROW(OutputFolder(path, force), OutputFolderRefusal) << path;
    }
  }
  fs::current_path(cwd);
  setenv("HOME", saved_home.c_str(), 1);
  EXPECT_EQ(Snapshot(parent_), before);
}

// Every change Commit makes to the file system fails in turn: each time the commit either
// fails with the target exactly as it was (entries, contents, the same files) and nothing left
// beside it, or finds another way (a link that cannot be made: file by file) and puts the
// run's files in place.
TEST_F(OutputFolderTest, AFailureAtEveryStepOfTheCommitLeavesTheFolderAsItWas) {
  for (bool with_others : {false, true}) {
    SCOPED_TRACE(with_others ? "a folder with a user's entries (--force): file by file"
                             : "a folder of nbox's files: one swap");
    int failed_steps = 0;
    for (int step = 1;; ++step) {
      ASSERT_LT(step, 50);
      fs::remove_all(target_);
      fs::create_directories(target_);
      Write(target_ / "results.json", "old");
      Write(target_ / "links.csv", "old samples");
      Write(target_ / "cosim.out", "sweep's terminal");
      if (with_others) {
        Write(target_ / "notes.txt", "mine");
        fs::create_directories(target_ / "data");
        Write(target_ / "data" / "big.bin", "a user's data");
      }
      const auto before = Snapshot(target_);
      OutputFolder out(target_.string(), with_others);
      out.Write("results.json", "new");
      out.Write("perf.json", "new perf");
      out.FailAtStepForTest(step);
      try {
        out.Commit();
      } catch (const std::runtime_error& e) {
        ++failed_steps;
        EXPECT_NE(std::string(e.what()).find("failed on purpose"), std::string::npos) << e.what();
        EXPECT_EQ(Snapshot(target_), before) << "after a failure at step " << step;
        EXPECT_EQ(EntriesBeside(), 2) << "the target and the staging folder, after step " << step;
        continue;
      }
      EXPECT_EQ(Read(target_ / "results.json"), "new") << "step " << step;
      EXPECT_EQ(Read(target_ / "perf.json"), "new perf");
      EXPECT_FALSE(fs::exists(target_ / "links.csv"));
      EXPECT_EQ(Snapshot(target_)["cosim.out"].second, before.at("cosim.out").second);
      if (with_others) {
        EXPECT_EQ(Snapshot(target_)["data/big.bin"], before.at("data/big.bin"));
        EXPECT_EQ(Snapshot(target_)["notes.txt"], before.at("notes.txt"));
      }
      if (out.StepsForTest() < step) break;  // this commit met no failure: every step was tried
    }
    // One swap: the link, the swap. File by file: the folder set aside, two old files, two new.
    EXPECT_GE(failed_steps, with_others ? 5 : 1);
  }
  EXPECT_EQ(EntriesBeside(), 1);
}

// A run output's name taken by something nbox did not write (here a symlink): not replaced.
TEST_F(OutputFolderTest, AnEntryOfARunOutputsNameThatIsNotAFileIsNotReplaced) {
  fs::create_directories(target_);
  Write(parent_ / "elsewhere.json", "a user's file");
  fs::create_symlink(parent_ / "elsewhere.json", target_ / "results.json");
  const auto before = Snapshot(target_);
  EXPECT_THROW(OutputFolder(target_.string()), OutputFolderRefusal);
  OutputFolder out(target_.string(), /*force=*/true);
  out.Write("results.json", "new");
  EXPECT_THROW(out.Commit(), std::runtime_error);
  EXPECT_EQ(Snapshot(target_), before);
  EXPECT_EQ(Read(parent_ / "elsewhere.json"), "a user's file");
}

TEST_F(OutputFolderTest, ARunThatNeverCommitsChangesNothing) {
  Write(parent_ / "unrelated", "x");
  fs::create_directories(target_);
  Write(target_ / "results.json", "old");
  {
    OutputFolder out(target_.string());
    out.Write("results.json", "half");
  }
  EXPECT_EQ(Read(target_ / "results.json"), "old");
  EXPECT_EQ(EntriesBeside(), 2);  // the target and the unrelated file: no staging folder
}

// A run killed with SIGKILL leaves its staging folder; the next run into the same target
// removes nbox's files from it when the process it is named after no longer exists, and the
// folder if that empties it. A live one's (a concurrent run: here this test's own process),
// other targets', and anything that is not nbox's stay.
TEST_F(OutputFolderTest, AKilledRunsStagingFolderIsRemovedByTheNextRun) {
  // A process that has ended: a child that exited and was reaped.
  const pid_t ended = fork();
  if (ended == 0) _exit(0);
  ASSERT_GT(ended, 0);
  ASSERT_EQ(waitpid(ended, nullptr, 0), ended);
  const fs::path abandoned = parent_ / (".run.nbox-staging-" + std::to_string(ended));
  const fs::path set_aside = parent_ / (".run.nbox-previous-" + std::to_string(ended));
  const fs::path live = parent_ / (".run.nbox-staging-" + std::to_string(getppid()));
  const fs::path other = parent_ / (".other.nbox-staging-" + std::to_string(ended));
  for (const fs::path& folder : {abandoned, set_aside, live, other}) {
    fs::create_directories(folder);
    Write(folder / "results.json", "{}");
  }
  Write(set_aside / "mine.txt", "not nbox's");
  {
    OutputFolder output(target_.string());
    output.Write("results.json", "{\"run\": 2}");
    output.Commit();
  }
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_FALSE(fs::exists(set_aside / "results.json"));
  EXPECT_EQ(Read(set_aside / "mine.txt"), "not nbox's");
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(Read(target_ / "results.json"), "{\"run\": 2}");
}

TEST_F(OutputFolderTest, ATargetThatIsAFileIsRefusedUpFront) {
  Write(target_, "a file");
  EXPECT_THROW(OutputFolder(target_.string()), OutputFolderRefusal);
  EXPECT_THROW(OutputFolder(target_.string(), true), OutputFolderRefusal);
  EXPECT_EQ(Read(target_), "a file");
  EXPECT_EQ(EntriesBeside(), 1);
}

TEST_F(OutputFolderTest, TheRunsOwnFileNamesAreKnown) {
  for (const char* name :
       {"results.json", "perf.json", "traffic.csv", "links.csv", "trace.json", "messages.csv",
        "rank12.log", "comm_groups.json", "nbox.3.et", "results-llm-a.json"}) {
    EXPECT_TRUE(IsRunOutput(name)) << name;
    EXPECT_FALSE(IsSweepCompanion(name)) << name;
  }
  for (const char* name : {"cosim.out", "cosim.err", "status.json", "ports.png"}) {
    EXPECT_FALSE(IsRunOutput(name)) << name;
    EXPECT_TRUE(IsSweepCompanion(name)) << name;
  }
  for (const char* name : {"rank.log", "notes.txt", "results.json.bak", "results-.json"}) {
    EXPECT_FALSE(IsRunOutput(name)) << name;
    EXPECT_FALSE(IsSweepCompanion(name)) << name;
  }
}

}  // namespace
}  // namespace nbox::cosim

namespace nbox::cosim {
namespace {

// The room for a run's files is set aside in the staging folder, never seen in the output
// folder, and given back when the files are written.
TEST_F(OutputFolderTest, TheRoomSetAsideForTheFilesNeverReachesTheFolder) {
  {
    OutputFolder out(target_.string());
    out.Reserve(1 << 20);
    struct stat info {};
    ASSERT_EQ(stat((out.staging() / ".nbox-reserve").c_str(), &info), 0);
    EXPECT_GE(static_cast<uint64_t>(info.st_blocks) * 512, 1u << 20) << "not allocated";
    out.Release();
    EXPECT_FALSE(fs::exists(out.staging() / ".nbox-reserve"));
    out.Reserve(1 << 20);
    out.Write("results.json", "new");
    out.Commit();
  }
  EXPECT_FALSE(fs::exists(target_ / ".nbox-reserve"));
  EXPECT_EQ(Read(target_ / "results.json"), "new");
  EXPECT_EQ(EntriesBeside(), 1);
}

// More than the file system has free: refused before anything is allocated, naming the
// folder and the sizes, and nothing is left beside the target.
TEST_F(OutputFolderTest, AFileSystemWithoutRoomForTheRunIsFoundBeforeItRuns) {
  const uint64_t free_bytes = fs::space(parent_).available;
  {
    OutputFolder out(target_.string());
    try {
      out.Reserve(free_bytes + (uint64_t{1} << 30));
      FAIL() << "reserved more than the file system has";
    } catch (const OutputFolderNoRoom& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(target_.string()), std::string::npos) << message;
      EXPECT_NE(message.find("MiB free"), std::string::npos) << message;
    }
    EXPECT_FALSE(fs::exists(out.staging() / ".nbox-reserve"));
  }
  EXPECT_FALSE(fs::exists(target_));
  EXPECT_EQ(EntriesBeside(), 0);
}

}  // namespace
}  // namespace nbox::cosim
