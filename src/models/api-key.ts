import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { API_KEY_KINDS, type ApiKeyKind } from '../schemas/statuses';
import { Account } from './account';


@Table({ tableName: 'api_keys', underscored: true, timestamps: true })
export class ApiKey extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => Account)
  @Column({ type: DataType.UUID, allowNull: false })
  declare accountId: string;

  @Column({ type: DataType.STRING(255), allowNull: false })
  declare name: string;

  // SHA-256 of the whole key, hex. The key itself is never stored.
  @Column({ type: DataType.CHAR(64), allowNull: false, unique: true })
  declare keyHash: string;

  // First 8 characters of the key ("svc_1a2b"), so a person can tell keys apart.
  @Column({ type: DataType.STRING(8), allowNull: false })
  declare keyPrefix: string;

  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true })
  declare active: boolean;

  // The database refuses any other value too (a CHECK constraint).
  @Column({
    type: DataType.STRING(16),
    allowNull: false,
    defaultValue: 'integration',
    validate: { isIn: [API_KEY_KINDS] },
  })
  declare kind: ApiKeyKind;

  @Column({ type: DataType.DATE(3), allowNull: true })
  declare expiresAt: Date | null;

  @Column({ type: DataType.DATE(3), allowNull: true })
  declare lastUsedAt: Date | null;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare updatedAt: Date;
}
