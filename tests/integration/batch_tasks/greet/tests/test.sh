#!/bin/bash
# The agent was asked to write greeting.txt; the verifier checks it, from the task's worktree.
. "$(dirname "$0")/expect.sh"
expect_file greeting.txt hello
