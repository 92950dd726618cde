from mbank.cli import main

raise SystemExit(main())
