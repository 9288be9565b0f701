from sizing.cli import main

main(prog_name="sizing")
