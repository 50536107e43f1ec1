import sys

from tests.fuzz.fuzz import main

sys.exit(main(sys.argv[1:]))
