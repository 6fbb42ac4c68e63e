#!/bin/bash
# Expects a file the agent is never asked to write: this task's reward is 0.
if [ -f missing.txt ]; then echo PASS; else echo "FAIL: missing.txt is not there"; exit 1; fi
