// OutputFolder (tools/cosim/output_folder.h): a run's files replace the output folder as one
// unit; a run that never commits leaves it as it was and nothing beside it; files nbox-cosim
// does not write are carried over (the same file, so an open writer keeps writing into it).
#include "tools/cosim/output_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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

TEST_F(OutputFolderTest, ANewRunReplacesTheOldRunsFilesAndKeepsForeignOnes) {
  fs::create_directories(target_ / "pictures");
  Write(target_ / "results.json", "old");
  Write(target_ / "links.csv", "old samples");  // the old run sampled links, the new does not
  Write(target_ / "rank3.log", "old log");
  Write(target_ / "cosim.out", "sweep's copy of the terminal");
  Write(target_ / "pictures" / "plot.png", "png");
  struct stat before {};
  ASSERT_EQ(stat((target_ / "cosim.out").c_str(), &before), 0);
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
  struct stat after {};
  ASSERT_EQ(stat((target_ / "cosim.out").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(Read(target_ / "pictures" / "plot.png"), "png");
  EXPECT_EQ(EntriesBeside(), 1);
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
// removes it when the process it is named after no longer exists, and leaves a live one's (a
// concurrent run: here this test's own process) and other targets' alone.
TEST_F(OutputFolderTest, AKilledRunsStagingFolderIsRemovedByTheNextRun) {
  // A process that has ended: a child that exited and was reaped.
  const pid_t ended = fork();
  if (ended == 0) _exit(0);
  ASSERT_GT(ended, 0);
  ASSERT_EQ(waitpid(ended, nullptr, 0), ended);
  const fs::path abandoned = parent_ / (".run.nbox-staging-" + std::to_string(ended));
  const fs::path live = parent_ / (".run.nbox-staging-" + std::to_string(getppid()));
  const fs::path other = parent_ / (".other.nbox-staging-" + std::to_string(ended));
  for (const fs::path& folder : {abandoned, live, other}) {
    fs::create_directories(folder);
    Write(folder / "results.json", "{}");
  }
  {
    OutputFolder output(target_.string());
    output.Write("results.json", "{\"run\": 2}");
    output.Commit();
  }
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(Read(target_ / "results.json"), "{\"run\": 2}");
}

TEST_F(OutputFolderTest, ATargetThatIsAFileIsRefusedUpFront) {
  Write(target_, "a file");
  EXPECT_THROW(OutputFolder(target_.string()), std::runtime_error);
  EXPECT_EQ(Read(target_), "a file");
  EXPECT_EQ(EntriesBeside(), 1);
}

TEST_F(OutputFolderTest, TheRunsOwnFileNamesAreKnown) {
  for (const char* name : {"results.json", "perf.json", "traffic.csv", "links.csv", "trace.json",
                           "messages.csv", "rank12.log", "comm_groups.json"}) {
    EXPECT_TRUE(OutputFolder::IsRunOutput(name)) << name;
  }
  for (const char* name : {"cosim.out", "cosim.err", "status.json", "rank.log", "notes.txt"}) {
    EXPECT_FALSE(OutputFolder::IsRunOutput(name)) << name;
  }
}

}  // namespace
}  // namespace nbox::cosim
