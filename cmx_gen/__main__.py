from cmx_gen.cli.main import main

raise SystemExit(main())
