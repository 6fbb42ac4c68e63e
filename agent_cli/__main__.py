from agent_cli.cli import main

raise SystemExit(main())
