#if canImport(SwiftUI)
// The sample app's SwiftUI feed, on every platform with SwiftUI (iOS, Mac Catalyst, macOS, tvOS,
// visionOS, watchOS): `ManagedImage` without a fixed frame in a lazy stack, with a label for
// VoiceOver, an aspect ratio and a fixed frame, type-checked by `.ci/apple-surface-check`.
import Foundation
import ManagedCacheUIKit
import SwiftUI

/// A column of photos: each row as wide as the column and as tall as its image's aspect ratio
/// (animated ones play); a banner of 16:9; an avatar of 44 points.
struct PhotoFeed: View {
    let photoURL: URL
    let animatedURL: URL
    let bannerURL: URL
    let avatarURL: URL

    var body: some View {
        ScrollView {
            LazyVStack(spacing: 8) {
                ManagedImage(url: photoURL, accessibilityLabel: Text("A lighthouse at dusk"))
                ManagedImage(url: animatedURL, scaleMode: .aspectFit, accessibilityLabel: Text("A dancing cat")) { phase in
                    ManagedImageDefaultContent(phase: phase, label: Text("A dancing cat"))
                }
                ManagedImage(url: bannerURL)
                    .aspectRatio(16 / 9, contentMode: .fit)
                ManagedImage(url: avatarURL, animatesImages: false) { phase in
                    ManagedImageDefaultContent(phase: phase)
                }
                .frame(width: 44, height: 44)
            }
        }
    }
}
#endif
