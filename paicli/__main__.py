from paicli.cli import main

raise SystemExit(main())
