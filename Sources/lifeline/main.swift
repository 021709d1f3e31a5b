import LifelineCommands

await LifelineCommand.main()
