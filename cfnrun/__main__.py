from cfnrun.cli import main

main()
