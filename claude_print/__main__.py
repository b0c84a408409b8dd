from claude_print.command.cli import main

if __name__ == "__main__":
    main()
