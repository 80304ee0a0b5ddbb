#!/usr/bin/env python3
"""pario: run, benchmark and report on pario programs."""
import sys

def main(argv):
    print("usage: pario {run,bench,report} ...")
    return 0 if argv[1:2] in ([], ["--help"], ["-h"]) else 2

if __name__ == "__main__":
    sys.exit(main(sys.argv))
