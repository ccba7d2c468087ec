from chpit_assets.cli import main

raise SystemExit(main())
