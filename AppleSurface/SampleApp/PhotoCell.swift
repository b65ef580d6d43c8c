#if canImport(UIKit) && !os(watchOS)
// The sample app: what an iOS developer writes with the package, type-checked by
// `.ci/apple-surface-check` against the UIKit stand-in in Swift 6 mode.
import ManagedCache
import ManagedCacheUIKit
import UIKit

/// A table-view cell showing a photo with a `ManagedImageView`, reused while scrolling.
final class PhotoCell: UITableViewCell {
    static let reuseIdentifier = "PhotoCell"

    let photoView = ManagedImageView(frame: CGRect(x: 0, y: 0, width: 80, height: 80))
    let captionLabel = UILabel(frame: .zero)
    private(set) var tapCount = 0

    override init(style: UITableViewCell.CellStyle, reuseIdentifier: String?) {
        super.init(style: style, reuseIdentifier: reuseIdentifier)
        photoView.contentMode = .scaleAspectFill
        photoView.clipsToBounds = true
        contentView.addSubview(photoView)
        contentView.addSubview(captionLabel)
        // Callbacks arrive on the main queue: they may touch the cell's views.
        photoView.onImageSet = { [weak self] image, origin in
            self?.captionLabel.text = "\(image.pixelWidth)×\(image.pixelHeight) from \(origin)"
        }
        photoView.onFailure = { [weak self] error in
            self?.captionLabel.text = "failed: \(error)"
        }
        photoView.onTap = { [weak self] in
            self?.tapCount += 1
        }
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    /// Called from `tableView(_:cellForRowAt:)`.
    func show(_ url: URL, caption: String) {
        captionLabel.text = caption
        photoView.load(url: url)
    }

    override func prepareForReuse() {
        super.prepareForReuse()
        photoView.clear()  // never shows the previous row's image again
        captionLabel.text = nil
    }

    override func layoutSubviews() {
        super.layoutSubviews()
        photoView.frame = CGRect(x: 8, y: 8, width: 80, height: bounds.height - 16)
    }
}

/// A table of photos: cells registered, dequeued and loaded as they appear.
final class PhotoListViewController: UIViewController, UITableViewDataSource, UITableViewDelegate {
    private let urls: [URL]
    private let tableView = UITableView(frame: .zero, style: .plain)
    private(set) var selectedRow: Int?

    init(urls: [URL]) {
        self.urls = urls
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) {
        urls = []
        super.init(coder: coder)
    }

    override func viewDidLoad() {
        super.viewDidLoad()
        tableView.register(PhotoCell.self, forCellReuseIdentifier: PhotoCell.reuseIdentifier)
        tableView.dataSource = self
        tableView.delegate = self
        tableView.rowHeight = 96
        view.addSubview(tableView)
    }

    func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int { urls.count }

    func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell {
        let cell = tableView.dequeueReusableCell(withIdentifier: PhotoCell.reuseIdentifier, for: indexPath)
        (cell as? PhotoCell)?.show(urls[indexPath.row], caption: "photo \(indexPath.row)")
        return cell
    }

    // Row selection must keep working with a ManagedImageView inside the cell.
    func tableView(_ tableView: UITableView, didSelectRowAt indexPath: IndexPath) {
        selectedRow = indexPath.row
        tableView.deselectRow(at: indexPath, animated: true)
    }
}

/// A collection-view cell with a `ManagedImageView`.
final class ThumbnailCell: UICollectionViewCell {
    let imageView = ManagedImageView(frame: .zero)

    override init(frame: CGRect) {
        super.init(frame: frame)
        imageView.frame = contentView.bounds
        imageView.autoresizingMask = [.flexibleWidth, .flexibleHeight]
        contentView.addSubview(imageView)
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    override func prepareForReuse() {
        super.prepareForReuse()
        imageView.clear()
    }
}
#endif
