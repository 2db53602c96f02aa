// The command without its CommandLine trait (`swift build --disable-default-traits`, or a package
// that depends on thumbframe with `traits: []` and builds everything): swift-argument-parser is
// then not resolved, so the command is a stub that says how to build it, and the tree still builds.
#if !CommandLine
    import Foundation

    @main
    enum Thumbframe {
        static func main() {
            FileHandle.standardError.write(Data("thumbframe: built without its CommandLine trait; build with the default traits\n".utf8))
            exit(70)
        }
    }
#endif
