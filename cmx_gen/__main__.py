from cmx_gen.cli import main

raise SystemExit(main())
